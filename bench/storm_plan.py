"""The storm's events: HyperPod node events and SNS controller notifications, with redeliveries,
drawn from a seed."""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

WORKERS: Final = 16
CONTROLLER: Final = "i-0a1b2c3d4e5f60001"
# A storm as a failing rack or switch gives it: mostly unhealthy workers, a few of them
# healthy again, the controller affected now and then, and EventBridge delivering again
# events whose target invocation it did not see succeed.
NODE_MIX: Final = (
    ("worker-unhealthy", 0.85),
    ("worker-healthy", 0.03),
    ("controller-unhealthy", 0.02),
    ("redelivery", 0.10),
)
SNS_REDELIVERY_SHARE: Final = 0.2
CONTROLLER_MESSAGES: Final = (
    "Slurm Controller is OFF (10.1.0.11, Primary Node)",
    "Slurm Controller is ON, (10.1.0.12, Primary Node)",
    "Slurm Controller is OFF (10.1.0.12, Backup Node)",
    "Slurm Controller is ON, (10.1.0.11, Backup Node)",
)


@dataclass(frozen=True)
class StormEvent:
    kind: str
    event: Mapping[str, Any]
    redelivery_of: str | None = None


def _pick(mix: Sequence[tuple[str, float]], draw: float) -> str:
    total = 0.0
    for kind, share in mix:
        total += share
        if draw < total:
            return kind
    return mix[-1][0]


def node_event_plan(
    count: int, seed: int, worker_template: Mapping[str, Any], controller_template: Mapping[str, Any]
) -> list[StormEvent]:
    """``count`` EventBridge node events in the storm's mix, the same for the same seed."""
    rng = random.Random(seed)
    plan: list[StormEvent] = []
    for index in range(count):
        kind = _pick(NODE_MIX, rng.random())
        if kind == "redelivery" and plan:
            original = rng.choice(plan)
            plan.append(StormEvent("redelivery", original.event, original.redelivery_of or original.kind))
            continue
        if kind == "controller-unhealthy":
            event = copy.deepcopy(dict(controller_template))
            event["detail"]["InstanceId"] = CONTROLLER
        else:
            event = copy.deepcopy(dict(worker_template))
            event["detail"]["InstanceId"] = f"i-0f0f0f0f0f0f{rng.randint(1, WORKERS):05d}"
            if kind == "worker-healthy":
                event["detail"]["HealthSummary"].update(HealthStatus="Healthy", RepairAction="None")
            else:
                kind = "worker-unhealthy"
        event["id"] = f"storm-{index:05d}"
        plan.append(StormEvent(kind, event))
    return plan


def sns_plan(count: int, seed: int, template: Mapping[str, Any]) -> list[StormEvent]:
    """``count`` SNS deliveries of controller notifications, some delivered again (same MessageId)."""
    rng = random.Random(seed)
    plan: list[StormEvent] = []
    for index in range(count):
        if plan and rng.random() < SNS_REDELIVERY_SHARE:
            original = rng.choice(plan)
            plan.append(StormEvent("redelivery", original.event, original.redelivery_of or original.kind))
            continue
        event = copy.deepcopy(dict(template))
        event["Records"][0]["Sns"].update(
            MessageId=f"storm-sns-{index:05d}", Message=rng.choice(CONTROLLER_MESSAGES)
        )
        plan.append(StormEvent("notification", event))
    return plan
