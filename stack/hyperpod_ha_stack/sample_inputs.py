"""The fixed inputs every message sample is made from: one cluster, its two controllers' evidence,
the run that found them, its links and its OpsItem, at one "now" (2026-12-01 10:00 UTC)."""

from __future__ import annotations

from typing import Any, Final

from hyperpod_ha import console_links
from hyperpod_ha.incidents import OpenRequest
from hyperpod_ha.incidents.messages import OpenedIncident
from hyperpod_ha.incidents.ops_item import severity_for
from hyperpod_ha.topic_messages import Links

# 2026-12-01 10:00 UTC, the samples' "now".
NOW: Final = 1_796_119_200.0
REGION: Final = "us-west-2"
# The stack `configure` names for the cluster: the samples' commands name it (`--stack-name`).
STACK_NAME: Final = "hyperpod-ha-ml-cluster"
CLUSTER: Final = "ml-cluster"
ACCOUNT: Final = "123456789012"
EXECUTION: Final = (
    f"arn:aws:states:{REGION}:{ACCOUNT}:execution:"
    "hyperpod-ha-FailoverVerificationStateMachine:ml-cluster-7f3a"
)
DRILL_EXECUTION: Final = EXECUTION.replace("FailoverVerification", "FailoverDrill")
CLUSTER_ARN: Final = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/abcd1234efgh"
SECRET: Final = f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:ml-cluster-slurmdbd-HGZcWv"
OPS_ITEM: Final = "oi-0123456789ab"


def controller_entry(index: int, **entry: Any) -> dict[str, Any]:
    instance = f"i-0{index}a2b3c4d5e6f70{index}"
    return {
        "position": index - 1,
        "instance_id": instance,
        "address": f"10.1.0.1{index}",
        "target": f"sagemaker-cluster:abcd1234efgh_controller-machine-{instance}",
        "status": "CHECKED",
        "slurmctld_log": "/var/log/slurm/slurmctld.log",
        "state_save_location": "/fsx/slurm/state",
        **entry,
    }


DOWN_EVIDENCE: Final = {
    "ctl1": controller_entry(1, active=False, slurmctld="stopped", answers_ping=False),
    "ctl2": controller_entry(2, status="UNREACHABLE", reason="Session Manager: TargetNotConnected"),
}
WELL_EVIDENCE: Final = {
    "ctl1": controller_entry(1, active=False, slurmctld="stopped", answers_ping=False),
    "ctl2": controller_entry(2, active=True, slurmctld="running", answers_ping=True),
}
DOWN_REASONS: Final = (
    "no controller is active",
    "ctl1: slurmctld stopped (process state T), does not answer ping",
    "ctl2: unreachable: Session Manager: TargetNotConnected",
    "nobody writes the heartbeat: last beat 4 min 10 s ago by ctl1",
)


def trigger_fields(
    source: str = "watchdog", ident: str = "tick-2026-12-01T09:58", ago: float = 120
) -> dict[str, Any]:
    from hyperpod_ha.human_time import iso_utc

    return {
        "trigger": {"source": source, "id": ident, "time": iso_utc(NOW - ago)},
        "started_at": iso_utc(NOW - ago + 1),
        "run_reason": f"{source}: DOWN"
        if source == "watchdog"
        else "slurmctld ON on 10.1.0.12 (primary script)",
    }


def incident_request(**event: Any) -> OpenRequest:
    base = {"cluster": CLUSTER, "execution_id": EXECUTION, "evidence": DOWN_EVIDENCE, **trigger_fields()}
    return OpenRequest.from_event({**base, **event})


def run_links(execution_id: str = EXECUTION) -> Links:
    """As IncidentFunction makes them: no run link where the id is no execution (a roll-out)."""
    return Links(
        execution=console_links.execution_console_url(execution_id, REGION),
        ops_item=console_links.ops_item_console_url(OPS_ITEM, REGION),
    )


def opened_incident(request: OpenRequest, *, created: bool = True, opened_ago: float = 0) -> OpenedIncident:
    severity = severity_for(request.verdict, request.kind)
    return OpenedIncident(
        OPS_ITEM, created, severity, None, run_links(request.execution_id), NOW - opened_ago
    )
