"""How a run's lease id and execution name follow from its trigger, so that a redelivered
trigger or a retried invocation can never start a second execution."""

from __future__ import annotations

import hashlib
import re
import uuid

from hyperpod_ha.runs.models import Trigger


def lease_id_for(trigger: Trigger) -> str:
    if trigger.source == "operator" and not trigger.id:
        return uuid.uuid4().hex[:20]
    return hashlib.sha256(trigger.key.encode()).hexdigest()[:20]


def execution_name(cluster: str, lease_id: str) -> str:
    # Execution names: 1-80 characters of [A-Za-z0-9-_].
    safe = re.sub(r"[^A-Za-z0-9_-]", "-", cluster)[:58]
    return f"{safe}-{lease_id}"


def execution_arn(state_machine_arn: str, name: str) -> str:
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + f":{name}"
