"""Step Functions' answer about executions, as ``hyperpod_ha.own_executions`` asks it: each
execution's state machine and status as given, every question kept."""

from __future__ import annotations

from dataclasses import dataclass, field

from hyperpod_ha.own_executions import OwnExecutions

ACCOUNT_PREFIX = "arn:aws:states:us-east-1:123456789012"
DRILLS = f"{ACCOUNT_PREFIX}:stateMachine:hyperpod-ha-failover-drill"
RESTORES = f"{ACCOUNT_PREFIX}:stateMachine:hyperpod-ha-redundancy-restore"


@dataclass
class KnownExecutions:
    """``DescribeExecution`` of the executions ``known`` names: (state machine, status)."""

    known: dict[str, tuple[str, str]] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    def status(self, execution_arn: str) -> tuple[str, str] | None:
        self.asked.append(execution_arn)
        return self.known.get(execution_arn)


def execution_of(state_machine_arn: str, name: str) -> str:
    return state_machine_arn.replace(":stateMachine:", ":execution:") + f":{name}"


def own_executions(
    state_machine_arn: str,
    workflow: str,
    running: tuple[str, ...] = (),
    ended: dict[str, str] | None = None,
) -> OwnExecutions:
    """This stack's ``workflow`` state machine: the executions ``running`` (ARNs) are RUNNING;
    ``ended`` names others by their name with their status (``{"r2": "SUCCEEDED"}``)."""
    known = dict.fromkeys(running, (state_machine_arn, "RUNNING"))
    known |= {
        execution_of(state_machine_arn, name): (state_machine_arn, status)
        for name, status in (ended or {}).items()
    }
    return OwnExecutions(state_machine_arn, KnownExecutions(known), workflow)


@dataclass
class EveryExecutionRuns:
    """Every execution of ``state_machine_arn`` asked about is RUNNING: for the tests of what a
    step does once its execution passed the check."""

    state_machine_arn: str
    asked: list[str] = field(default_factory=list)

    def status(self, execution_arn: str) -> tuple[str, str] | None:
        self.asked.append(execution_arn)
        return self.state_machine_arn, "RUNNING"
