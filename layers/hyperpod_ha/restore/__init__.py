"""Restoring redundancy (opt-in, ``RestoreRedundancy``): slurmctld started again on a controller
that is up and reachable but whose slurmctld is not running, is stopped or does not answer.

``settings`` (the mode and the hourly bound), ``models`` (an action, a plan, what else holds
the cluster), ``guards`` (when nothing, or not that controller, may be started), ``planner``
(pure: from one check of every controller to the plan), ``node`` (the one command it runs on a
controller, ``restore_node.sh``), what it touches, each a named adapter: ``state_items`` (the
hourly count, the unreachable record), ``secret_versions`` (a rotation rolling out, Secrets
Manager), ``reboot`` (BatchRebootClusterNodes), ``verification`` (the run that follows);
``context`` (what the steps touch, the request), ``steps`` (one function per step of the
restore state machine), ``record`` (the status record and the ``restore-action`` notice) and
``function`` (RestoreRedundancyFunction and its settings). The lease, the re-check before
acting and the reading of the node script's output are the kit's (``acting``), shared with the
drill. It imports other runtime modules (acting, commands, controllers, verdict, lease,
state_table, status_records, topic_messages, message_sections, incidents' settings, runs,
request_fields, environment, errors, observability) and boto3 only in ``function``; nothing
imports it but the restore's handler, the watchdog (``settings``, ``models`` and the pure
``planner``: whether a restore would act) and the development tools.
"""
