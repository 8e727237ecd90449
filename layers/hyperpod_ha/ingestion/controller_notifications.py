"""What one controller status notification asks for: the cluster's verification run, started or
joined, with the notification as its trigger."""

from __future__ import annotations

from typing import Any

from hyperpod_ha.human_time import utc_text
from hyperpod_ha.notifications import ControllerNotification
from hyperpod_ha.observability import logger
from hyperpod_ha.runs.verification_runs import VerificationRuns
from hyperpod_ha.trigger import Trigger


def controller_notification_record(
    runs: VerificationRuns,
    cluster: str,
    message_id: str,
    notification: ControllerNotification,
    timestamp: str,
) -> dict[str, Any]:
    trigger = Trigger(
        source="sns",
        id=message_id,
        summary={
            "status": notification.status,
            "address": notification.address,
            "role": notification.role,
            "timestamp": timestamp,
        },
        time=utc_text(timestamp),
    )
    reason = f"slurmctld {notification.status} on {notification.address} ({notification.role} script)"
    decision = runs.start_or_join(cluster, trigger, reason)
    logger.info(
        "controller notification handled",
        extra={
            "message_id": message_id,
            "outcome": decision.outcome,
            "execution_arn": decision.execution_arn,
        },
    )
    return {
        "message_id": message_id,
        "outcome": decision.outcome,
        "status": notification.status,
        "address": notification.address,
        "role": notification.role,
        "execution_arn": decision.execution_arn,
    }
