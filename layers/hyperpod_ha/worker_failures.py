"""Where :mod:`hyperpod_ha.ingestion.worker_failures` used to be; kept for the importers of these names."""

from hyperpod_ha.ingestion.worker_failures import MassFailurePolicy, Tally, WorkerFailures, WorkerTally

__all__ = ["MassFailurePolicy", "Tally", "WorkerFailures", "WorkerTally"]
