"""The incident of a failed roll-out: one controller kept its old slurmdbd.conf."""

from __future__ import annotations

from typing import Any

from hyperpod_ha.incidents import OpenRequest
from hyperpod_ha.redaction import redact, scrub_text
from hyperpod_ha.topic_messages.sections import RunStart
from hyperpod_ha.trigger import Trigger


def rollout_failed(cluster: str, secret_arn: str, controller: dict[str, Any], reason: str) -> OpenRequest:
    instance = controller.get("instance_id") or controller.get("target") or "a controller"
    name = controller.get("hostname") or instance
    return OpenRequest(
        cluster=cluster,
        verdict="",
        kind="rollout-failed",
        execution_id=f"{secret_arn}:{controller.get('instance_id', '')}",
        reasons=(
            # Not "credentials: <reason>": the redaction would read a secret's key and value there.
            scrub_text(
                f"slurmdbd on {name} ({instance}) kept its old credentials; the roll-out stopped: {reason}"
            ),
            "the controllers after it were left as they were; fix it, then run the roll-out again "
            '(invoke RotateDbSecretFunction with {"action": "rollout"})',
        ),
        # Keyed by its name: the message lists it as a controller (instance id, address, target).
        evidence=redact({str(name): controller}),
        run_start=RunStart(Trigger("rotation", secret_arn), None, "slurmdbd credential roll-out"),
    )
