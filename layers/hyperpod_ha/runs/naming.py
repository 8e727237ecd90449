"""How a run's execution name follows from its lease (whose id follows from its trigger:
``hyperpod_ha.lease``), so that a redelivered trigger or a retried invocation can never start a
second execution; and which execution holds the lease."""

from __future__ import annotations

import re

from hyperpod_ha.lease import Lease


def execution_name(cluster: str, lease_id: str) -> str:
    # Execution names: 1-80 characters of [A-Za-z0-9-_].
    safe = re.sub(r"[^A-Za-z0-9_-]", "-", cluster)[:58]
    return f"{safe}-{lease_id}"


def execution_arn(state_machine_arn: str, name: str) -> str:
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + f":{name}"


def holder_execution_arn(holder: Lease, state_machine_arn: str) -> str:
    """The execution holding the lease: a drill names its own (of the drill state machine); a
    run's is the verification state machine's (``state_machine_arn``) of the lease's name."""
    return holder.execution_arn or execution_arn(state_machine_arn, holder.execution_name)
