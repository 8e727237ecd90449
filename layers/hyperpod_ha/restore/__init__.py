"""Restoring redundancy (opt-in, ``RestoreRedundancy``): slurmctld started again on a controller
that is up and reachable but whose slurmctld is not running, is stopped or does not answer.

``settings`` (the mode and the hourly bound), ``models`` (an action, a plan, what else holds
the cluster), ``guards`` (when nothing, or not that controller, may be started), ``planner``
(pure: from one check of every controller to the plan), ``node`` (the one command it runs on a
controller, ``restore_node.sh``), ``secret_versions`` (a rotation rolling out, Secrets
Manager), ``context`` (what the steps touch, the request), ``steps`` (one function per step of
the restore state machine), ``record`` (the status record and the ``restore-action`` notice)
and ``function`` (RestoreRedundancyFunction and its settings). It imports other runtime modules
(commands, controllers, verdict, lease, state_table, status_records, topic_messages,
message_sections, incidents' settings, runs, request_fields, environment, errors,
observability) and boto3 only in ``function``; nothing imports it but the restore's handler,
the watchdog (``settings``, ``models`` and the pure ``planner``: whether a restore would act)
and the development tools.
"""
