"""Verification runs: taking the cluster's lease (``hyperpod_ha.lease``) and starting the
verification workflow, one run per cluster at a time, and the clean-up after a run that ended
without finishing its workflow (AbandonedRunFunction's service). May import the shared runtime
modules (``lease``, ``state_table``, ``environment``, ``errors``, ...) and ``incidents``; never
``drill``, ``ingestion`` or ``watchdog``, which use it or share the lease with it."""
