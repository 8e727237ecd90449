"""Where :mod:`hyperpod_ha.runs` used to be; kept for the importers of these names."""

from hyperpod_ha.runs.models import RunDecision, RunSettings, Trigger, VerificationRunsSettings
from hyperpod_ha.runs.naming import execution_arn, execution_name, lease_id_for
from hyperpod_ha.runs.verification_runs import MAX_RECORDED_JOINS, VerificationRuns
from hyperpod_ha.state_table import lease_key, put_lease, release_lease

__all__ = [
    "MAX_RECORDED_JOINS",
    "RunDecision",
    "RunSettings",
    "Trigger",
    "VerificationRuns",
    "VerificationRunsSettings",
    "execution_arn",
    "execution_name",
    "lease_id_for",
    "lease_key",
    "put_lease",
    "release_lease",
]
