"""The restore's record step (``finish``): the note it returns for the open incident (what each
action did, that restoring stopped and why, what is left to a person), or none when the restore
did nothing worth a notice; and that IncidentFunction takes the largest note it can make."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import pytest

from hyperpod_ha.acting.notice_topic import NoticeTopic
from hyperpod_ha.incidents import NoteRequest
from hyperpod_ha.incidents import keys as incident_keys
from hyperpod_ha.incidents import models as incident_models
from hyperpod_ha.own_executions import OwnExecutions
from hyperpod_ha.restore import record
from hyperpod_ha.restore.context import RestoreContext
from hyperpod_ha.restore.errors import RestoreStepRefused
from hyperpod_ha.restore.guards import within_hourly_bound
from hyperpod_ha.restore.settings import RestoreSettings
from hyperpod_ha.restore.state_items import RestoreItems
from hyperpod_ha.status_records import StatusRecords
from hyperpod_ha.topic_messages import TopicMessage
from tests.fakes.step_executions import ACCOUNT_PREFIX, RESTORES, own_executions

RESTORE = f"{ACCOUNT_PREFIX}:execution:hyperpod-ha-redundancy-restore:restore-1"
START_CTL2 = "aws ssm start-session --target i-0a1b2c3d4e5f60002 --document-name hyperpod-ha-RestoreSlurmctld"


class _Table:
    """A state table that keeps what the status record puts."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def put_item(self, **request: Any) -> dict[str, Any]:
        self.items.append(request)
        return {}


@dataclass
class Silence:
    """The state table's items as the finish step reads them: the silence in force, if any."""

    silence: str | None = None

    def silenced(self) -> str | None:
        return self.silence


def context(
    notices: list[TopicMessage], silence: str | None = None, executions: OwnExecutions | None = None
) -> RestoreContext:
    unused: Any = None  # finish touches only the status record, the silence and the topic

    return RestoreContext(
        cluster="ml-cluster",
        settings=RestoreSettings(mode="standbys"),
        document="hyperpod-ha-RestoreSlurmctld",
        transport="session-manager",
        lease=unused,
        controllers=unused,
        commands=unused,
        items=cast(RestoreItems, Silence(silence)),
        rollouts=unused,
        status=StatusRecords(cast("Any", _Table()), "state"),
        topic=cast(NoticeTopic, Notices(notices)),
        runs=unused,
        executions=executions or own_executions(RESTORES, "restore", (RESTORE,)),
    )


@dataclass
class Notices:
    """The topic as the finish step tells it: each message kept."""

    sent: list[TopicMessage]

    def notify(self, message: TopicMessage) -> str:
        self.sent.append(message)
        return f"message-{len(self.sent)}"


def plan(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "mode": "standbys",
        "verdict": "HEALTHY",
        "active_controller": "ctl1",
        "actions": [],
        "not_taken": [],
        "blocked": None,
        "stopped": None,
        "reasons": [],
        "act": False,
    }
    return {**base, **changes}


def finish(
    plan_: dict[str, Any], results: list[dict[str, Any]] | None = None, *, dry_run: bool = False
) -> dict[str, Any]:
    notices: list[TopicMessage] = []
    event = {
        "action": "finish",
        "request": {"cluster": "ml-cluster", "mode": "standbys", "dry_run": dry_run},
        "plan": plan_,
        "results": results or [],
        "execution_id": RESTORE,
    }
    out = record.finish(event, context(notices))
    assert (out["message_id"] is None) == (not notices)
    return out


def test_an_action_restored_is_noted_for_redundancy_lost_and_the_verdicts_incident() -> None:
    done = {
        "controller": "ctl2",
        "kind": "start-slurmctld",
        "restored": True,
        "what": "ctl2: slurmctld runs, logged the standby role and answers ping",
        "command": START_CTL2,
    }
    note = finish(plan(act=True), [done])["note"]
    assert note == {
        "kinds": ["redundancy-lost", "HEALTHY"],
        "lines": [
            "restore RestoreRedundancy=standbys: verdict HEALTHY, active ctl1",
            "ctl2: start-slurmctld: restored"
            " (ctl2: slurmctld runs, logged the standby role and answers ping)",
        ],
    }


def test_an_action_not_restored_is_noted_with_what_it_saw_and_the_command_by_hand() -> None:
    failed = {
        "controller": "ctl2",
        "kind": "start-slurmctld",
        "restored": False,
        "what": "ctl2: slurmctld not running yet",
        "command": START_CTL2,
    }
    lines = finish(plan(act=True, verdict="DEGRADED"), [failed])["note"]["lines"]
    assert "ctl2: start-slurmctld: NOT restored (ctl2: slurmctld not running yet)" in lines
    assert f"ctl2: by hand: {START_CTL2}" in lines


def test_restoring_stopped_at_the_hourly_bound_is_noted_with_why() -> None:
    stopped = within_hourly_bound(2, 2)
    assert stopped is not None
    not_taken = {"controller": "ctl2", "kind": "start-slurmctld", "command": START_CTL2}
    out = finish(plan(stopped=stopped, not_taken=[not_taken], reasons=[stopped]))
    assert out["verify"] is False
    lines = out["note"]["lines"]
    assert stopped in lines
    assert stopped.startswith("restoring stopped: 2 restore actions on this cluster this hour already")
    assert lines[-1] == f"ctl2: by hand: {START_CTL2}"


def test_a_restore_that_did_nothing_notes_nothing() -> None:
    out = finish(plan(reasons=["nothing to restore: every other controller's slurmctld runs"]))
    assert out["note"] is None
    assert out["message_id"] is None


def test_a_blocked_restore_tells_the_incident_why_and_sends_no_notice() -> None:
    blocked = "a drill holds the cluster (drill arn:aws:states:...:execution:drill:d1)"
    out = finish(plan(blocked=blocked, reasons=[blocked]))
    assert out["message_id"] is None
    assert out["note"]["lines"][-1] == blocked


def test_a_silenced_restore_records_its_outcome_and_publishes_nothing() -> None:
    notices: list[TopicMessage] = []
    failed = {"controller": "ctl2", "kind": "start-slurmctld", "restored": False, "what": "refused"}
    silence = "silenced until 2026-12-06T18:00:00Z by arn:aws:iam::123456789012:user/bob: kernel"
    event = {
        "action": "finish",
        "request": {"cluster": "ml-cluster", "mode": "standbys", "dry_run": False},
        "plan": plan(act=True),
        "results": [{**failed, "command": START_CTL2}],
        "execution_id": RESTORE,
    }
    restore_context = context(notices, silence)
    out = record.finish(event, restore_context)
    assert (notices, out["message_id"], out["silenced"]) == ([], None, silence)
    kept = restore_context.status._ddb.items  # type: ignore[attr-defined]
    assert kept
    assert "ctl2" in str(kept[-1]["Item"])


def test_a_dry_run_notes_nothing_on_the_incident() -> None:
    stopped = within_hourly_bound(2, 2)
    assert stopped is not None
    not_taken = {"controller": "ctl2", "kind": "start-slurmctld", "command": START_CTL2}
    out = finish(plan(stopped=stopped, not_taken=[not_taken]), dry_run=True)
    assert out["note"] is None
    assert out["message_id"] is not None  # the notice still tells who asked


def test_incident_function_takes_the_largest_note_finish_makes() -> None:
    results = [
        {
            "controller": f"ctl{n}" * 60,
            "kind": "reboot-node",
            "restored": False,
            "what": "w" * 500,
            "command": "c" * 500,
        }
        for n in range(12)
    ]
    not_taken = [{"controller": f"ctl{n}", "kind": "hand-back", "command": "c" * 500} for n in range(12)]
    out = finish(
        plan(stopped="restoring stopped: " + "s" * 500, blocked="b" * 500, not_taken=not_taken), results
    )
    assert len(out["note"]["lines"]) == record.MAX_NOTE_LINES
    request = NoteRequest.from_event({"cluster": "ml-cluster", "execution_id": RESTORE, **out["note"]})
    assert len(request.lines) == record.MAX_NOTE_LINES


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (record.KIND_REDUNDANCY_LOST, incident_keys.KIND_REDUNDANCY_LOST),
        (record.MAX_NOTE_LINES, incident_models.MAX_NOTE_LINES),
    ],
)
def test_the_restore_and_incident_function_agree(ours: object, theirs: object) -> None:
    assert ours == theirs


# --- issue 35, finding 2: only a running execution of this stack's restore records -------------


@pytest.mark.parametrize(
    ("executions", "execution_id", "reason"),
    [
        (
            own_executions(RESTORES, "restore", (RESTORE,)),
            RESTORE + "-2",
            "no restore execution of that name",
        ),
        (
            own_executions(RESTORES, "restore", ended={"restore-1": "ABORTED"}),
            RESTORE,
            "is ABORTED, not running",
        ),
        (
            own_executions(RESTORES, "restore", (RESTORE,)),
            f"{ACCOUNT_PREFIX}:execution:hyperpod-ha-failover-drill:restore-1",
            "names no execution of this stack's restore state machine",
        ),
    ],
    ids=["no such execution", "an ended restore", "a drill's execution"],
)
def test_a_finish_outside_a_running_restore_records_and_sends_nothing(
    executions: OwnExecutions, execution_id: str, reason: str
) -> None:
    notices: list[TopicMessage] = []
    failed = {"controller": "ctl2", "kind": "start-slurmctld", "restored": False, "what": "forged"}
    event = {
        "action": "finish",
        "request": {"cluster": "ml-cluster", "mode": "standbys", "dry_run": False},
        "plan": plan(act=True),
        "results": [failed],
        "execution_id": execution_id,
    }
    restore_context = context(notices, executions=executions)
    with pytest.raises(RestoreStepRefused, match=f"nothing is recorded: .*{reason}"):
        record.finish(event, restore_context)
    assert notices == []
    assert restore_context.status._ddb.items == []  # type: ignore[attr-defined]


def test_a_finish_inside_its_running_restore_records_with_its_execution() -> None:
    notices: list[TopicMessage] = []
    restore_context = context(notices)
    event = {
        "action": "finish",
        "request": {"cluster": "ml-cluster", "mode": "standbys", "dry_run": False},
        "plan": plan(act=True),
        "results": [{"controller": "ctl2", "kind": "start-slurmctld", "restored": True, "what": "ok"}],
        "execution_id": RESTORE,
    }
    assert record.finish(event, restore_context)["restored"] == ["ctl2"]
    assert len(notices) == 1
    assert RESTORE in str(restore_context.status._ddb.items[-1]["Item"])  # type: ignore[attr-defined]
