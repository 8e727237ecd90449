"""Rotating the Slurm accounting database's secret, and rolling it out to slurmdbd. It may
import the rest of the runtime package (``hyperpod_ha``), never the development tools;
:mod:`.slurmdbd_credentials` imports nothing but the standard library: it is the script that
runs on the controller.

- :mod:`.secret`: the secret's JSON (the HyperPod sample's short ``username``/``password``
  form and the full RDS form), written back compact and with every key it had.
- :mod:`.grants`: reading ``SHOW GRANTS`` lines and re-aiming them at another account.
- :mod:`.database`: PyMySQL logins, password changes and grant copies on MariaDB.
- :mod:`.contract` and :mod:`.errors`: the rotation contract's steps, event and result;
  :mod:`.settings`: the strategy and the database a rotation runs with.
- :mod:`.versions`: the secret's versions in Secrets Manager.
- :mod:`.steps`: which step runs; :mod:`.step_create`, :mod:`.step_set`,
  :mod:`.step_set_alternating` (with :mod:`.grant_copy`), :mod:`.step_check`,
  :mod:`.step_finish`: the four steps.
- :mod:`.rollout`: rewriting slurmdbd.conf and restarting slurmdbd, controller by controller,
  through the command runner; :mod:`.rollout_document`: the SSM documents that run
  :mod:`.slurmdbd_credentials`, the script on the node.
- :mod:`.function`: RotateDbSecretFunction and its settings, with :mod:`.collaborators`
  (what it calls), :mod:`.rollout_coordination`, :mod:`.controller_order`,
  :mod:`.rollout_incident`, :mod:`.lease` (the cluster's lease a roll-out holds) and
  :mod:`.sdk_logs`.

No password, secret string or password hash ever reaches a log line, an exception, a return
value or an incident: errors carry reasons that were built to be safe to log.
"""
