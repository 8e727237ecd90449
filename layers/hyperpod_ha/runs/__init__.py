"""Verification runs: taking the cluster's lease (``hyperpod_ha.lease``) and starting the
verification workflow, one run per cluster at a time (``verification_runs``, with the values in
``models`` and the settings every function that starts a run reads in ``settings``), and the
clean-up after a run that ended without finishing its workflow (``abandoned``;
AbandonedRunFunction and its settings in ``function``). May import the shared runtime modules
(``lease``, ``state_table``, ``environment``, ``errors``, ...) and ``incidents``; never
``drill``, ``ingestion`` or ``watchdog``, which use it or share the lease with it."""
