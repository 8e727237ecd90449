"""The drill's last step (``finish``): its report recorded, its message sent; an OpsItem for a
drill that acted, none for a dry run (issue 40: a dry run changed nothing and is no one's work)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import pytest

from hyperpod_ha.drill import steps
from hyperpod_ha.drill.models import DrillStepRefused
from hyperpod_ha.drill.records import DrillRecords
from hyperpod_ha.incidents import Incidents
from hyperpod_ha.own_executions import OwnExecutions
from hyperpod_ha.status_records import StatusRecords
from hyperpod_ha.topic_messages import TopicMessage
from tests.fakes.step_executions import DRILLS, RESTORES, KnownExecutions, execution_of, own_executions
from tests.unit.drill.cases.own_cluster import EXECUTION, Held, discovered, drills_running
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


def finish(
    dry_run: bool, executions: OwnExecutions | None = None, **changes: Any
) -> tuple[dict[str, Any], Records, Status]:
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
        executions=executions or drills_running(),
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
        **changes,
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


# --- issue 35, finding 2: only a running execution of this stack's drill reports ---------------

NOT_VERIFIED = {"hand_back": {"target": "ctl1", "verdict": "DOWN", "verified": False}}


@pytest.mark.parametrize(
    ("executions", "execution_id", "reason"),
    [
        (drills_running(), EXECUTION + "-forged", "no drill execution of that name exists"),
        (
            own_executions(DRILLS, "drill", ended={"d1": "SUCCEEDED"}),
            EXECUTION,
            "that drill execution is SUCCEEDED, not running",
        ),
        (
            # An id with the drill's prefix that Step Functions says is of another state machine.
            OwnExecutions(DRILLS, KnownExecutions({EXECUTION: (RESTORES, "RUNNING")}), "drill"),
            EXECUTION,
            "not of this stack's drill state machine",
        ),
        (drills_running(), execution_of(RESTORES, "d1"), "names no execution of this stack's drill"),
        (drills_running(), "d1", "names no execution of this stack's drill"),
    ],
    ids=["no such execution", "an ended drill", "another machine's", "a restore's ARN", "not an ARN"],
)
def test_a_finish_outside_a_running_drill_records_sends_and_opens_nothing(
    executions: OwnExecutions, execution_id: str, reason: str
) -> None:
    recorded: list[tuple[Records, Status]] = []

    def forged(**changes: Any) -> None:
        _, records, status = finish(False, executions, **changes)
        recorded.append((records, status))

    with pytest.raises(DrillStepRefused, match=f"nothing is reported or released: .*{reason}"):
        forged(execution_id=execution_id, lease={"taken": False}, **NOT_VERIFIED)
    assert recorded == []


def test_the_refusal_reads_nothing_and_writes_nothing() -> None:
    records, status = Records(), Status()
    executions = own_executions(DRILLS, "drill")
    context = steps.DrillContext(
        cluster="c",
        controllers=lambda: discovered(CTL1, CTL2),
        lease=cast(Any, None),  # a refused report neither counts nor releases a lease
        commands=lambda: cast(Any, None),
        records=cast(DrillRecords, records),
        status=cast(StatusRecords, status),
        incidents=no_incidents,
        transport="simulated",
        executions=executions,
    )
    event = {"action": "finish", "request": {"cluster": "c"}, "execution_id": EXECUTION, **NOT_VERIFIED}
    with pytest.raises(DrillStepRefused):
        steps.run_step(event, context)
    assert (records.messages, records.ops_items, status.put_kinds) == ([], [], [])
    assert cast(KnownExecutions, executions.executions).asked == [EXECUTION]


def test_a_refused_drill_reports_from_its_running_execution() -> None:
    # Its begin found the cluster busy: no lease taken, the report still goes out.
    report, records, status = finish(
        False, drills_running(), lease={"taken": False}, plan=None, takeover_started=False, takeover=None
    )
    assert report["outcome"] == "refused"
    assert "lease_released" not in report
    assert len(records.messages) == 1
    assert "drill" in status.put_kinds


def test_begin_outside_a_running_drill_takes_no_lease() -> None:
    context = steps.DrillContext(
        cluster="c",
        controllers=lambda: discovered(CTL1, CTL2),
        lease=cast(Any, None),  # would fail if the step took it
        commands=lambda: cast(Any, None),
        records=cast(Any, None),
        status=cast(Any, None),
        incidents=no_incidents,
        transport="simulated",
        executions=drills_running(),
    )
    event = {"action": "begin", "request": {"cluster": "c"}, "execution_id": EXECUTION + "-forged"}
    with pytest.raises(DrillStepRefused, match="the lease is not taken: no drill execution"):
        steps.run_step(event, context)
