"""The restore's steps that decide without AWS: the request, and whether a restarted
controller came back as it should (a standby: the standby role and ping; the primary after a
hand-back: the primary role, then slurmdbd's registration)."""

from __future__ import annotations

import json

import pytest

from hyperpod_ha.restore.context import RestoreRequest
from hyperpod_ha.restore.errors import InvalidRestoreRequest
from hyperpod_ha.restore.models import RestoreAction
from hyperpod_ha.restore.settings import RestoreMode
from hyperpod_ha.restore.steps import judge
from tests.conftest import ROOT
from tests.unit.verdict.cases.verdict_probes import STANDBY, Probe, Unreachable, node


def action(kind: str = "start-slurmctld", name: str = "ctl2", index: int = 1) -> RestoreAction:
    return RestoreAction.from_json(
        {
            "kind": kind,
            "controller": name,
            "index": index,
            "instance_id": node(name).instance_id,
            "target": node(name).target,
            "why": "slurmctld not running",
            "command": "aws ssm start-session ...",
        }
    )


def test_the_sample_request_is_read_and_a_bad_one_refused() -> None:
    sample = json.loads((ROOT / "events" / "stepfunctions_restore_start.json").read_text())
    request = RestoreRequest.from_json(sample, RestoreMode.OFF)
    assert (request.cluster, request.mode, request.dry_run) == ("ml-cluster", RestoreMode.STANDBYS, False)
    assert RestoreRequest.from_json({"cluster": "ml-cluster"}, RestoreMode.ALL).mode is RestoreMode.ALL
    for bad in ({**sample, "mode": "some"}, {**sample, "dry_run": "no"}, {**sample, "cluster": "a b"}, []):
        with pytest.raises(InvalidRestoreRequest):
            RestoreRequest.from_json(bad, RestoreMode.OFF)


def test_a_standby_that_logged_its_role_and_answers_ping_is_restored() -> None:
    assert judge(action(), STANDBY.report(), registered=False) == (
        "restored",
        "ctl2: slurmctld runs, logged the standby role and answers ping",
    )


@pytest.mark.parametrize(
    ("probe", "seen"),
    [
        (Probe(name="ctl2", slurmctld=None, log="slurmctld_log_ctl2_standby.txt"), "not running yet"),
        (Probe(name="ctl2", log="slurmctld_log_ctl1_restart.txt"), "not standby"),
        (
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_standby.txt",
                ping="Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is DOWN",
            ),
            "does not answer ping yet",
        ),
        (Unreachable("ctl2"), "could not be checked"),
    ],
    ids=["not running", "no standby role yet", "no ping", "unreachable"],
)
def test_a_controller_not_back_yet_is_waited_for(probe: Probe | Unreachable, seen: str) -> None:
    done, what = judge(action(), probe.report(), registered=False)
    assert done == "waiting"
    assert seen in what


def test_the_primary_taking_control_back_is_registered_once_when_slurmdbd_names_none() -> None:
    primary = Probe(log="slurmctld_log_ctl1_restart.txt", dbd="sacctmgr_cluster_none.txt")
    hand_back = action("hand-back", "ctl1", 0)
    assert judge(hand_back, primary.report(), registered=False)[0] == "register"
    assert judge(hand_back, primary.report(), registered=True)[0] == "restored"
    assert judge(hand_back, Probe(log="slurmctld_log_ctl1_restart.txt").report(), registered=False)[0] == (
        "restored"
    )


VERIFICATION = "arn:aws:states:us-east-1:123456789012:stateMachine:hyperpod-ha-verification"
RUN = "arn:aws:states:us-east-1:123456789012:execution:hyperpod-ha-verification:ml-cluster-abc"


def test_the_run_that_hands_its_lease_over_is_one_of_this_stacks_runs() -> None:
    from hyperpod_ha.acting.execution_lease import HandedLease
    from hyperpod_ha.restore.errors import InvalidRestoreRequest
    from hyperpod_ha.restore.steps import handed_lease

    assert handed_lease({"cluster": "c"}, VERIFICATION) is None
    given = {"handed_from": {"lease_id": "abc", "execution": RUN}}
    assert handed_lease(given, VERIFICATION) == HandedLease("abc", "ml-cluster-abc")
    # An operator's run holds no lease: it hands nothing, the restore takes a free lease.
    assert handed_lease({"handed_from": {"lease_id": "", "execution": RUN}}, VERIFICATION) is None
    for forged in (
        {"lease_id": "abc", "execution": RUN.replace("hyperpod-ha-verification", "other-machine")},
        {"lease_id": "abc", "execution": RUN.replace("123456789012", "999999999999")},
        {"lease_id": "abc"},
        {"lease_id": "x" * 65, "execution": RUN},
        "abc",
    ):
        with pytest.raises(InvalidRestoreRequest, match="handed_from"):
            handed_lease({"handed_from": forged}, VERIFICATION)
