"""The restore's plan from one check of every controller: which controller gets slurmctld
started in each mode, and every guard that blocks it (one test each)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from hyperpod_ha.controllers.maintenance import Maintenance, NodeUnderUpdate
from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.restore.errors import InvalidRestoreRequest
from hyperpod_ha.restore.models import ClusterHolds, RestoreAction
from hyperpod_ha.restore.planner import RestoreInput, plan_restore
from hyperpod_ha.restore.settings import RestoreMode
from tests.unit.verdict.cases.verdict_probes import (
    CTL1_KILLED,
    CTL2_TOOK_OVER,
    STANDBY,
    Conf,
    Probe,
    Unreachable,
    node,
)

DOCUMENT = "hyperpod-ha-RestoreSlurmctldDocument-abc"
CTL2_DOWN_PING = "Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is DOWN"
PRIMARY = Probe(ping=CTL2_DOWN_PING)
STANDBY_DEAD = Probe(name="ctl2", slurmctld=None, log="slurmctld_log_ctl2_standby.txt")
STANDBY_STOPPED = Probe(name="ctl2", slurmctld="T", log="slurmctld_log_ctl2_standby.txt", ping=CTL2_DOWN_PING)
# ctl1 killed, ctl2 took over: FAILED_OVER, the configured primary's slurmctld not running.
FAILED_OVER = (CTL1_KILLED, CTL2_TOOK_OVER)


def reports(*probes: Probe | Unreachable) -> list[ControllerReport]:
    return [probe.report() for probe in probes]


def plan(*probes: Probe | Unreachable, mode: RestoreMode = RestoreMode.STANDBYS, **given: object):  # type: ignore[no-untyped-def]
    result = plan_restore(RestoreInput(mode, reports(*probes), DOCUMENT, **given))  # type: ignore[arg-type]
    assert json.loads(json.dumps(result.to_json()))["mode"] == mode.value
    return result


def test_standbys_starts_a_dead_standby() -> None:
    result = plan(PRIMARY, STANDBY_DEAD)
    assert result.blocked is None
    assert [(a.kind, a.controller, a.index) for a in result.actions] == [("start-slurmctld", "ctl2", 1)]
    action = result.actions[0]
    assert action.instance_id == node("ctl2").instance_id
    assert action.target == node("ctl2").target
    assert action.why == "slurmctld not running"
    assert (
        action.command == f"aws ssm start-session --target {node('ctl2').target} --document-name {DOCUMENT}"
    )
    assert result.reasons[0] == "restoring: start slurmctld on ctl2 (slurmctld not running)"


def test_standbys_restarts_a_stopped_standby() -> None:
    result = plan(PRIMARY, STANDBY_STOPPED)
    assert [(a.controller, a.why) for a in result.actions] == [("ctl2", "slurmctld stopped (SIGSTOP)")]


def test_nothing_to_restore_when_every_standby_runs() -> None:
    result = plan(Probe(), STANDBY)
    assert result.verdict == "HEALTHY"
    assert result.actions == ()
    assert result.not_taken == ()
    assert result.blocked is None
    assert result.reasons == ("nothing to restore: every other controller's slurmctld runs",)


def test_off_takes_nothing_but_names_the_exact_action() -> None:
    result = plan(PRIMARY, STANDBY_DEAD, mode=RestoreMode.OFF)
    assert result.actions == ()
    assert [a.controller for a in result.not_taken] == ["ctl2"]
    command = f"aws ssm start-session --target {node('ctl2').target} --document-name {DOCUMENT}"
    assert result.reasons == (
        f"RestoreRedundancy is off: would start slurmctld on ctl2 (slurmctld not running): {command}",
    )
    assert result.to_json()["act"] is False


def test_standbys_leaves_the_configured_primary_after_a_failover() -> None:
    result = plan(*FAILED_OVER)
    assert result.verdict == "FAILED_OVER"
    assert result.actions == ()
    assert [(a.kind, a.controller) for a in result.not_taken] == [("hand-back", "ctl1")]
    assert "RestoreRedundancy=standbys; all would hand control back" in result.reasons[0]


def test_all_hands_control_back_to_the_configured_primary() -> None:
    result = plan(*FAILED_OVER, mode=RestoreMode.ALL)
    assert [(a.kind, a.controller, a.index) for a in result.actions] == [("hand-back", "ctl1", 0)]
    assert "it takes control back" in result.reasons[0]


def test_no_hand_back_while_accounting_records_wait_for_slurmdbd() -> None:
    """The hand-back is a failover: the records queued in ctl2's slurmctld would be lost."""
    import dataclasses

    away = dataclasses.replace(
        CTL2_TOOK_OVER, dbd="sacctmgr_cluster_refused.txt", dbd_rc=1, sdiag="sdiag_dbd_queue_growing.txt"
    )
    result = plan(CTL1_KILLED, away, mode=RestoreMode.ALL)
    assert result.actions == ()
    assert result.not_taken == ()
    (note,) = [r for r in result.reasons if r.startswith("ctl1: ")]
    assert "not handed back: slurmdbd does not answer from the active controller ctl2" in note
    assert "3 accounting records wait" in note
    # Once slurmdbd answers, the hand-back goes on.
    assert [a.kind for a in plan(*FAILED_OVER, mode=RestoreMode.ALL).actions] == ["hand-back"]


def test_a_standby_unreachable_through_ssm_is_named_not_started() -> None:
    result = plan(PRIMARY, Unreachable("ctl2"))
    assert result.actions == ()
    # Since when it is unreachable is not known (the watchdog's record): no reboot yet.
    assert any(
        r.startswith("ctl2: not reachable through SSM (") and "RestoreUnreachableMinutes=15" in r
        for r in result.reasons
    )


# --- the guards, one test each ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("probes", "verdict"),
    [
        # the old primary wakes up: both act as primary
        ((Probe(heartbeat=(0, 0)), CTL2_TOOK_OVER), "SPLIT_BRAIN"),
        # nobody active: ctl1 killed, ctl2 still standby
        ((CTL1_KILLED, Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", slurmctld=None)), "DOWN"),
        ((Unreachable("ctl1"), Unreachable("ctl2")), "UNKNOWN"),
    ],
    ids=["split brain", "down", "unknown"],
)
def test_never_for_split_brain_down_or_unknown(probes: tuple[Probe, ...], verdict: str) -> None:
    result = plan(*probes, mode=RestoreMode.ALL)
    assert result.verdict == verdict
    assert result.actions == ()
    assert result.blocked is not None
    assert result.blocked.startswith(f"not restored: the verdict is {verdict}")
    assert result.reasons == (result.blocked,)


def test_guard_state_save_location_writable_on_the_active_controller() -> None:
    result = plan(Probe(ping=CTL2_DOWN_PING, writable=False), STANDBY_DEAD)
    assert result.actions == ()
    assert result.blocked is not None
    assert "is not writable on the active controller ctl1" in result.blocked


def test_guard_heartbeat_fresh() -> None:
    # Both read a heartbeat last written 15 minutes ago (SlurmctldTimeout is 10 s).
    stale = Probe(name="ctl2", slurmctld=None, log="slurmctld_log_ctl2_standby.txt", heartbeat=(0, 900))
    result = plan(Probe(ping=CTL2_DOWN_PING, heartbeat=(0, 900)), stale)
    assert result.actions == ()
    assert result.blocked is not None
    assert "wrote no fresh heartbeat" in result.blocked


def test_guard_cluster_under_maintenance() -> None:
    result = plan(PRIMARY, STANDBY_DEAD, maintenance=Maintenance("SystemUpdating"))
    assert result.actions == ()
    assert result.blocked is not None
    assert "HyperPod is updating the cluster" in result.blocked


def test_guard_node_under_update() -> None:
    updating = Maintenance("InService", (NodeUnderUpdate(node("ctl2").instance_id, "SystemUpdating"),))
    result = plan(PRIMARY, STANDBY_DEAD, maintenance=updating)
    assert result.actions == ()
    assert result.blocked is None
    assert "ctl2: not restored: HyperPod is updating that node (SystemUpdating)" in result.reasons


@pytest.mark.parametrize(
    ("holds", "expected"),
    [
        (
            ClusterHolds(holder="drill arn:aws:states:x"),
            "not restored: drill arn:aws:states:x holds the cluster",
        ),
        (ClusterHolds(rollout="a rotation of the database secret is in progress"), "in progress"),
    ],
    ids=["drill", "roll-out"],
)
def test_guard_a_drill_or_roll_out_holds_the_cluster(holds: ClusterHolds, expected: str) -> None:
    result = plan(PRIMARY, STANDBY_DEAD, holds=holds)
    assert result.actions == ()
    assert result.blocked is not None
    assert expected in result.blocked


@pytest.mark.parametrize("probes", [(PRIMARY, STANDBY_DEAD), (Unreachable("ctl1"), Unreachable("ctl2"))])
def test_guard_silenced_blocks_every_action_whatever_the_verdict(probes: tuple[Probe, ...]) -> None:
    silenced = "silenced until 2026-12-06T18:00:00Z by arn:aws:iam::123456789012:user/bob: kernel"
    result = plan(*probes, mode=RestoreMode.ALL, holds=ClusterHolds(silenced=silenced))
    assert (result.actions, result.not_taken) == ((), ())
    assert result.blocked == f"not restored: {silenced}"
    assert result.reasons == (result.blocked,)


def test_guard_never_the_active_controller() -> None:
    # ctl1 active and running: even in all, only the dead standby is started, never ctl1.
    result = plan(PRIMARY, STANDBY_DEAD, mode=RestoreMode.ALL)
    assert [a.controller for a in result.actions] == ["ctl2"]
    after_failover = plan(*FAILED_OVER, mode=RestoreMode.ALL)
    assert "ctl2" not in [a.controller for a in after_failover.actions]


def test_guard_at_most_restore_max_per_hour() -> None:
    result = plan(PRIMARY, STANDBY_DEAD, used_this_hour=2, max_per_hour=2)
    assert result.actions == ()
    assert [a.controller for a in result.not_taken] == ["ctl2"]
    assert result.stopped is not None
    assert result.stopped.startswith("restoring stopped: 2 restore actions on this cluster this hour")
    assert "RestoreMaxPerHour=2" in result.stopped
    assert result.stopped in result.reasons
    below = plan(PRIMARY, STANDBY_DEAD, used_this_hour=1, max_per_hour=2)
    assert [a.controller for a in below.actions] == ["ctl2"]
    assert below.stopped is None


def test_an_action_survives_its_json_and_bad_ones_are_refused() -> None:
    action = plan(PRIMARY, STANDBY_DEAD).actions[0]
    assert RestoreAction.from_json(json.loads(json.dumps(action.to_json()))) == action
    for bad in (
        None,
        {**action.to_json(), "kind": "reboot"},
        {**action.to_json(), "index": 12},
        {**action.to_json(), "target": "i-1; rm -rf /"},
        {**action.to_json(), "why": ""},
    ):
        with pytest.raises(InvalidRestoreRequest):
            RestoreAction.from_json(bad)


def test_all_leaves_the_hand_back_on_a_release_whose_takeover_is_known_bad() -> None:
    old = [replace(probe, conf=Conf(version="24.11.4")) for probe in FAILED_OVER]
    result = plan(*old, mode=RestoreMode.ALL)
    assert result.actions == ()
    assert [(a.kind, a.controller) for a in result.not_taken] == [("hand-back", "ctl1")]
    assert (
        "the configured primary ctl1 is left as it is (a hand-back walks into a known Slurm defect: "
        "Slurm 24.11.4 on ctl1: the backup slurmctld fails on its second takeover "
        "(slurm-24.11.5-second-takeover; fixed in 24.11.5))"
    ) in result.reasons[0]


def test_hyperpod_replacing_a_controller_node_blocks_every_start() -> None:
    primary = replace(PRIMARY, node_actions=("ctl2 Action:Replace",))
    result = plan(primary, STANDBY_DEAD)
    assert result.actions == ()
    assert result.blocked == (
        "not restored: HyperPod is acting on controller node ctl2: Action:Replace (Slurm reason); "
        "slurmctld is not restarted while a replacement or reboot runs"
    )
    # A compute node's replacement does not keep a dead standby down ...
    worker = plan(replace(PRIMARY, node_actions=("node7 Action:Reboot",)), STANDBY_DEAD)
    assert [a.controller for a in worker.actions] == ["ctl2"]


def test_hyperpod_replacing_any_node_holds_the_hand_back() -> None:
    # ... but control is not moved while HyperPod replaces any node.
    ctl2 = replace(CTL2_TOOK_OVER, node_actions=("node7 Action:Replace",))
    result = plan(CTL1_KILLED, ctl2, mode=RestoreMode.ALL)
    assert result.actions == ()
    assert [(a.kind, a.controller) for a in result.not_taken] == [("hand-back", "ctl1")]
    assert (
        "the configured primary ctl1 is left as it is (HyperPod is acting on node7: Action:Replace "
        "(Slurm reasons): control is not moved meanwhile)"
    ) in result.reasons[0]


def test_a_controller_node_in_a_deep_health_check_blocks_every_start() -> None:
    checking = Maintenance(
        "InService", (NodeUnderUpdate(node("ctl1").instance_id, "DeepHealthCheckInProgress"),)
    )
    result = plan(PRIMARY, STANDBY_DEAD, maintenance=checking)
    assert result.actions == ()
    assert result.blocked == (
        f"not restored: controller node {node('ctl1').instance_id} is in DeepHealthCheckInProgress"
    )


def test_a_standby_that_died_on_a_configuration_change_is_not_started_into_it() -> None:
    crashed = replace(
        STANDBY_DEAD,
        log="[2026-11-29T23:30:00.000] slurmctld running in background mode",
        conf_ages=(("topology.yaml", 300),),
        signal_exit=("11/SEGV", 240),
    )
    result = plan(PRIMARY, crashed)
    assert result.actions == ()
    assert (
        "ctl2: not restored: its slurmctld died after topology.yaml changed (killed by signal 11/SEGV); "
        "started again it dies the same way: fix topology.yaml first"
    ) in result.reasons
