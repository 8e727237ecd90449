"""The incident of an external accounting database change HyperPod could not revert
(``DatabaseConfiguration.RollbackStatus: RevertFailed``), opened through IncidentFunction.

HyperPodEventFunction asks IncidentFunction (one ``lambda:InvokeFunction`` grant) instead of
writing OpsItems itself: the OpsCenter, Incident Manager and topic grants, the redaction and
the de-duplication stay in one function."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hyperpod_ha.errors import HyperpodHaError
from hyperpod_ha.ingestion.cluster_event_metadata import DatabaseConfiguration
from hyperpod_ha.redaction import redact, scrub_text

if TYPE_CHECKING:
    from mypy_boto3_lambda import LambdaClient

# The same name as hyperpod_ha.incidents.keys.KIND_DATABASE_REVERT_FAILED (ingestion does not
# import the incidents feature; a unit test keeps the two equal).
KIND_DATABASE_REVERT_FAILED = "accounting-database-revert-failed"


class IncidentNotOpened(HyperpodHaError, RuntimeError):
    """IncidentFunction answered with an error; the delivery is retried. Safe to log."""


def revert_failed_request(
    cluster: str, event_id: str, database: DatabaseConfiguration, time: str = ""
) -> dict[str, Any]:
    """IncidentFunction's ``open`` request: one OpsItem per cluster while it is open. ``time``:
    the event's own (its message says when HyperPod reported it)."""
    reasons = [
        "HyperPod changed the cluster's external accounting database configuration, the change "
        "failed and HyperPod could not revert it (RollbackStatus RevertFailed)",
        f"HyperPod's failure message: {database.failure_message or '(none given)'}",
    ]
    if database.advisory:
        reasons.append(f"HyperPod's advisory: {database.advisory}")
    return {
        "action": "open",
        "cluster": cluster,
        "kind": KIND_DATABASE_REVERT_FAILED,
        "verdict": "",
        # The event, not a run: a redelivered event finds the same Incident Manager token.
        "execution_id": f"hyperpod-event:{hashlib.sha256(event_id.encode()).hexdigest()[:32]}",
        "reasons": [scrub_text(reason) for reason in reasons],
        "trigger": {"source": "eventbridge", "id": event_id, "time": time},
        "evidence": redact(
            {
                "event": {
                    "event_id": event_id,
                    "rollback_status": database.rollback_status,
                    "failure_message": database.failure_message,
                    "advisory": database.advisory,
                }
            }
        ),
    }


@dataclass(frozen=True)
class IncidentFunctionClient:
    lambda_client: LambdaClient
    function_arn: str

    def open(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.ask(request)

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """IncidentFunction's answer to ``request`` (open or resolve); raises when it failed."""
        answer = self.lambda_client.invoke(
            FunctionName=self.function_arn,
            InvocationType="RequestResponse",
            Payload=json.dumps(request).encode(),
        )
        payload = json.loads(answer["Payload"].read() or b"null")
        if answer.get("FunctionError"):
            error = payload.get("errorType", "Error") if isinstance(payload, dict) else "Error"
            raise IncidentNotOpened(f"IncidentFunction failed: {str(error)[:120]}")
        return payload if isinstance(payload, dict) else {}
