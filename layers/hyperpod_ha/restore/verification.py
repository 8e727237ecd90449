"""The verification run that follows a restore that acted (Step Functions, through the runs'
lease as any trigger's): its verdict says whether redundancy is back."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hyperpod_ha.runs.settings import VerificationRunsSettings
from hyperpod_ha.trigger import Trigger

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass(frozen=True)
class FollowingRuns:
    settings: VerificationRunsSettings
    dynamodb: DynamoDBClient
    cluster: str

    def start(self, execution_id: str, reason: str) -> dict[str, Any]:
        """Start (or join) the run for the restore ``execution_id``: one run per restore
        execution, a retried step joins or finds the same run."""
        from hyperpod_ha.runs.verification_runs import VerificationRuns

        runs = VerificationRuns.from_settings(self.settings, self.dynamodb)
        now = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        name = execution_id.rsplit(":", 1)[-1]
        trigger = Trigger("operator", f"restore-{name}"[:80] or uuid.uuid4().hex, {"restore": name}, now)
        decision = runs.start_or_join(self.cluster, trigger, reason)
        return {"outcome": decision.outcome, "execution_arn": decision.execution_arn}
