"""Warning before the failure: a controller that is slow but alive (``controller-overloaded``)
and accounting records about to be lost (``accounting-at-risk``), told from the figures every
check gathers. Slurm's own HA never fires for either: a slow primary still answers ping, and a
failover while slurmctld queues records for an absent slurmdbd loses the queue.

``models`` (a controller's figures, a warning), ``settings`` (the thresholds, parameters of the
stack), ``figures`` (from the reports, the verdict and the last sample to each controller's
figures: the RPC counters' differences, the queue's rate), ``rules`` (pure: which warnings the
figures give, with their reasons and codes), ``watch`` (the watchdog's: a warning sustained over
its window opens its incident through IncidentFunction, a warning gone resolves it; the last
sample and the windows in the state table) and ``metrics`` (the figures as CloudWatch metrics per
controller). May import ``controllers``, ``slurm``, ``state_table``, ``status_records``,
``human_time``, ``environment``, ``errors`` and ``observability``, not ``verdict`` (a verdict is
read through ``models.Judged``): the watchdog imports it, the restore's guard reads its pure
``rules``, and EvaluateVerdictFunction (the verdict's) tells a run's warnings with them
(``rules.one_check_warnings``; it opens no incident)."""
