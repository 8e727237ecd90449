"""Verification runs: the cluster's lease and starting the verification workflow, one run per
cluster at a time, and the clean-up after a run that ended without finishing its workflow
(AbandonedRunFunction's service). May import the shared runtime modules (``state_table``,
``settings``, ``errors``, ``aws_errors``, ``incidents``, ``drill``), never ``ingestion`` or
``watchdog``, which use it."""
