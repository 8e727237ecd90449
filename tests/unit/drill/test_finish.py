"""The drill's last step (``finish``): its report recorded, its message sent; an OpsItem for a
drill that acted, none for a dry run (issue 40: a dry run changed nothing and is no one's work)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from hyperpod_ha.drill import steps
from hyperpod_ha.drill.records import DrillRecords
from hyperpod_ha.incidents import Incidents
from hyperpod_ha.status_records import StatusRecords
from hyperpod_ha.topic_messages import TopicMessage
from tests.unit.drill.cases.own_cluster import EXECUTION, Held, discovered
from tests.unit.drill.test_rules import CTL1, CTL2


@dataclass(frozen=True)
class HeldAndReleased(Held):
    """This drill's lease: nothing joined it, its release succeeds."""

    def joined(self, cluster: str, lease_id: str) -> int:
        return 0

    def release(self, cluster: str, lease_id: str) -> bool:
        return True


class Records:
    """``DrillRecords`` as ``finish`` uses it: the messages sent and the OpsItems created."""

    region = "us-east-1"
    stack_name = "hyperpod-ha-c"

    def __init__(self) -> None:
        self.messages: list[TopicMessage] = []
        self.ops_items: list[str] = []

    def notify(self, message: TopicMessage) -> str | None:
        self.messages.append(message)
        return "message-1"

    def record(self, cluster: str, execution_id: str, title: str, body: str, data: Mapping[str, str]) -> str:
        self.ops_items.append(title)
        return "oi-000000000001"


class Status:
    def __init__(self) -> None:
        self.put_kinds: list[str] = []

    def put(self, cluster: str, kind: str, data: Mapping[str, Any]) -> bool:
        self.put_kinds.append(kind)
        return True


def no_incidents() -> Incidents:
    raise AssertionError("a verified drill opens no incident")


def finish(dry_run: bool) -> tuple[dict[str, Any], Records, Status]:
    records, status = Records(), Status()
    lease = HeldAndReleased(None, "state", 3600, "drill", execution=EXECUTION)  # type: ignore[arg-type]
    context = steps.DrillContext(
        cluster="c",
        controllers=lambda: discovered(CTL1, CTL2),
        lease=lease,
        commands=lambda: cast(Any, None),
        records=cast(DrillRecords, records),
        status=cast(StatusRecords, status),
        incidents=no_incidents,
        transport="simulated",
        clock=lambda: 40.0,
    )
    planned = {"refused": None, "primary": CTL1.to_json(), "target": CTL2.to_json()}
    acted: dict[str, Any] = {
        "takeover_started": True,
        "takeover": {"target": "ctl2", "active_seconds": 3.1, "verdict": "FAILED_OVER", "verified": True},
    }
    event = {
        "action": "finish",
        "request": {"cluster": "c", "dry_run": dry_run},
        "execution_id": EXECUTION,
        "lease": {"taken": True, "lease_id": lease.lease_id(EXECUTION)},
        "plan": planned,
        "check_verdict": "HEALTHY",
        **({} if dry_run else acted),
    }
    return steps.run_step(event, context), records, status


def test_a_dry_run_records_its_report_and_message_without_an_ops_item() -> None:
    report, records, status = finish(dry_run=True)
    assert (report["outcome"], report["dry_run"], report["verified"]) == ("completed", True, True)
    assert records.ops_items == []
    assert report["ops_item_id"] is None
    assert report["incident"] is None
    assert report["notified"] is True
    assert "dry run: checked and planned only" in records.messages[0].body
    # Its command names the stack, so it works as written wherever it is read (issue 40).
    assert (
        "hyperpod-ha status --cluster c --stack-name hyperpod-ha-c --region us-east-1"
        in records.messages[0].body
    )
    assert "drill" in status.put_kinds  # `hyperpod-ha status` still shows the dry run
    assert report["lease_released"] is True


def test_a_drill_that_acted_is_kept_as_a_resolved_ops_item() -> None:
    report, records, _ = finish(dry_run=False)
    assert records.ops_items == ["HyperPod cluster c: failover drill completed"]
    assert report["ops_item_id"] == "oi-000000000001"
