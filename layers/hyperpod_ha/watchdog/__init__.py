"""The watchdog: a scheduled check of every controller, for failures that send no event; when the
cluster is not verified it starts a verification run through the cluster's lease. May import the
shared runtime modules (``cluster``, ``health``, ``verdict``, ``commands``, ``state_table``) and
:mod:`hyperpod_ha.runs`; only its handler imports it."""
