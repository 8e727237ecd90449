"""Restoring redundancy (opt-in, ``RestoreRedundancy``): slurmctld started again on a controller
that is up and reachable but whose slurmctld is not running or hangs.

``settings`` (the mode and the hourly bound), ``models`` (an action, a plan, what else holds
the cluster), ``guards`` (when nothing, or not that controller, may be started), ``planner``
(pure: from one check of every controller to the plan). It imports ``hyperpod_ha.controllers``,
``hyperpod_ha.verdict``, ``hyperpod_ha.environment`` and ``hyperpod_ha.errors``; nothing imports
it but the restore's handler and the development tools.
"""
