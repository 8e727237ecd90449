"""Where :mod:`hyperpod_ha.runs.abandoned` used to be; kept for the importers of these names."""

from hyperpod_ha.runs.abandoned import (
    ABANDONED_STATUSES,
    FAILED,
    AbandonedRun,
    AbandonedRunRejected,
    incident_reasons,
    is_drill,
    needs_release_check,
    parse_abandoned_run,
)

__all__ = [
    "ABANDONED_STATUSES",
    "FAILED",
    "AbandonedRun",
    "AbandonedRunRejected",
    "incident_reasons",
    "is_drill",
    "needs_release_check",
    "parse_abandoned_run",
]
