"""The watchdog: a scheduled check of every controller, for failures that send no event; when the
cluster is not verified, or a restore of a standby would act, it starts a verification run
through the cluster's lease. ``scheduled_check`` (the check, :class:`Watchdog`),
``controller_checks`` (every controller at once), ``found_failures`` (what it remembers),
``tick`` (the schedule's input and the result), ``redundancy_loss`` (the redundancy-lost
incident its ticks drive), ``unreachable_nodes`` (since when a controller is unreachable through
SSM, for the restore's reboot), ``restore_start`` (a run for a restore, bounded by the restore's
planner), ``trigger_install`` (the Slurm triggers installed where missing) and ``function``
(WatchdogFunction and its settings). May import the runtime modules
``controllers``, ``verdict``, ``commands``, ``runs``, ``lease``, ``environment``, ``errors``,
``aws_errors``, ``state_table``, ``human_time``, ``observability``, the restore's pure parts
(``restore.settings``, ``restore.models``, ``restore.planner``), the node scripts' kit
(``acting.node_commands``) and ``slurm_triggers`` and IncidentFunction's client
(``ingestion.database_incidents``); only its handler imports it."""
