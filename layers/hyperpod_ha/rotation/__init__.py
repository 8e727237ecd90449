"""Rotating the Slurm accounting database's secret, and rolling it out to slurmdbd.

- :mod:`.secret`: the secret's JSON (the HyperPod sample's short ``username``/``password``
  form and the full RDS form), written back compact and with every key it had.
- :mod:`.grants`: reading ``SHOW GRANTS`` lines and re-aiming them at another account.
- :mod:`.database`: PyMySQL logins, password changes and grant copies on MariaDB.
- :mod:`.steps`: the four steps of the Secrets Manager rotation contract.
- :mod:`.rollout`: rewriting slurmdbd.conf and restarting slurmdbd, controller by controller,
  through the command runner; :mod:`.slurmdbd_credentials` is the script that runs on the node.

No password, secret string or password hash ever reaches a log line, an exception, a return
value or an incident: errors carry reasons that were built to be safe to log.
"""
