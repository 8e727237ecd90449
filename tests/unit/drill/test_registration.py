"""A change of control that leaves slurmdbd with no controller registered (Slurm 24.11, seen in
the lab): the drill notices it, registers the new controller again, and says so in its report."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any, cast

import pytest

from hyperpod_ha.drill import rules, steps
from hyperpod_ha.drill.node import NodeOutput, parse_node_output
from hyperpod_ha.drill.node_commands import DrillCommandFailed, NodeCommands
from hyperpod_ha.drill.summary import summary
from tests.unit.drill.cases.own_cluster import EXECUTION, discovered, drills_running, lease_held_by
from tests.unit.drill.test_node_script import run
from tests.unit.drill.test_rules import CTL1, CTL2


def unregistered(target: str = "ctl1", **entry: Any) -> dict[str, Any]:
    return {
        "verdict": "DEGRADED",
        "active_controller": target,
        "reasons": ["no controller is registered with slurmdbd (ControlHost empty)"],
        "evidence": {
            target: {
                "active": True,
                "slurmdbd_reachable": True,
                "slurmdbd_registered_host": None,
                "slurmdbd_error": None,
                **entry,
            }
        },
    }


def test_the_active_controller_missing_from_slurmdbd_is_registered_again_at_most_twice() -> None:
    phase = rules.new_phase("hand-back", CTL1, started_at=0.0, max_checks=10)
    phase = rules.measure(phase, unregistered(), now=5.0)
    assert (phase["next"], phase["active_seconds"]) == ("register", 5.0)
    for attempt in range(rules.MAX_REGISTRATIONS):
        phase["registrations"] = [*phase["registrations"], {"attempt": attempt}]
        phase = rules.measure(phase, unregistered(), now=6.0 + attempt)
    assert phase["next"] == "check-again"


@pytest.mark.parametrize(
    "verdict",
    [
        unregistered(slurmdbd_reachable=False),  # slurmdbd down: a reconfigure would not help
        unregistered(slurmdbd_error="this cluster is not registered with slurmdbd"),  # no row at all
        unregistered(slurmdbd_registered_host="127.0.0.1"),
        unregistered(active=False),
        {**unregistered(), "active_controller": "ctl2"},  # the target is not active yet
        {**unregistered(), "evidence": {"ctl1": {"active": True, "slurmdbd_reachable": True}}},
        {**unregistered(), "evidence": None},
    ],
)
def test_registration_is_only_asked_for_when_the_active_target_reaches_an_empty_slurmdbd(
    verdict: dict[str, Any],
) -> None:
    phase = rules.measure(rules.new_phase("hand-back", CTL1, 0.0, 10), verdict, now=1.0)
    assert phase["next"] == "check-again"


def attempt_after(output: NodeOutput, now: float = 12.5) -> dict[str, Any]:
    """The one registration kept on a fresh hand-back phase (started at 0) after ``output``."""
    phase = rules.with_registration(rules.new_phase("hand-back", CTL1, 0.0, 10), output, now)
    assert phase["next"] == "check-again"
    [attempt] = phase["registrations"]
    return dict(attempt)


def test_what_registering_found_and_did_is_kept() -> None:
    restored = attempt_after(
        NodeOutput(0, {"registered_before": "none", "reconfigure_rc": "0", "registered": "127.0.0.1"})
    )
    assert restored == {
        "at_seconds": 12.5,
        "registered_before": None,
        "reconfigured": True,
        "registered": "127.0.0.1",
        "error": None,
    }
    already = attempt_after(NodeOutput(0, {"registered_before": "10.0.0.1"}))
    assert (already["reconfigured"], already["registered"]) == (False, "10.0.0.1")
    refused = attempt_after(
        NodeOutput(
            1, {"reconfigure_rc": "1", "error": "scontrol reconfigure exited 1", "output": "Access denied"}
        )
    )
    assert (refused["registered"], refused["error"]) == (None, "scontrol reconfigure exited 1: Access denied")


class Commands:
    """``NodeCommands`` as the register step uses it: what it ran, and on which node."""

    def __init__(self, answer: NodeOutput | Exception) -> None:
        self.answer = answer
        self.targets: list[str] = []

    def register(self, target: str) -> NodeOutput:
        self.targets.append(target)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def register_step(phase_name: str, answer: NodeOutput | Exception) -> tuple[dict[str, Any], Commands]:
    commands = Commands(answer)
    unused: Any = None  # the register step reads no record, status or incident
    context = steps.DrillContext(
        cluster="c",
        controllers=lambda: discovered(CTL1, CTL2),
        lease=lease_held_by(EXECUTION),
        commands=lambda: cast(NodeCommands, commands),
        records=unused,
        status=unused,
        incidents=unused,
        transport="simulated",
        executions=drills_running(),
        clock=lambda: 40.0,
    )
    target = CTL2 if phase_name == "takeover" else CTL1
    phase = {**rules.new_phase(phase_name, target, 10.0, 10), "next": "register"}
    plan = {"primary": CTL1.to_json(), "target": CTL2.to_json()}
    event = {
        "action": "register",
        "phase": phase,
        "plan": plan,
        "request": {"cluster": "c"},
        "execution_id": EXECUTION,
    }
    return steps.run_step(event, context), commands


def test_the_register_step_runs_on_the_phase_s_new_controller_and_checks_again() -> None:
    output = NodeOutput(0, {"registered_before": "none", "reconfigure_rc": "0", "registered": "127.0.0.1"})
    phase, commands = register_step("hand-back", output)
    assert commands.targets == [CTL1.target]
    assert (phase["next"], len(phase["registrations"])) == ("check-again", 1)
    assert phase["registrations"][0]["at_seconds"] == 30.0
    _, commands = register_step("takeover", output)
    assert commands.targets == [CTL2.target]


def test_a_register_command_that_fails_is_kept_and_the_drill_goes_on() -> None:
    phase, _ = register_step("hand-back", DrillCommandFailed("SessionTimedOut: no answer in 60 s"))
    assert phase["next"] == "check-again"
    assert phase["registrations"][0]["error"] == "SessionTimedOut: no answer in 60 s"


def test_the_summary_says_the_drill_registered_the_controller_again() -> None:
    attempt = {"at_seconds": 40.4, "reconfigured": True, "registered": "127.0.0.1", "error": None}
    report = {
        "cluster": "ml-cluster",
        "outcome": "completed",
        "to": "ctl2",
        "takeover_registrations": [],
        "hand_back": {
            "to": "ctl1",
            "registrations": [attempt, {**attempt, "registered": None, "error": "x"}],
        },
    }
    body = summary(report, "us-east-1", 1_796_000_000).body
    assert (
        "After the hand-back, slurmdbd had no controller registered (40.4 s in): "
        "`scontrol reconfigure` on ctl1 registered it again."
    ) in body
    assert "registering ctl1 again failed: x." in body


@pytest.fixture
def accounting_node(node: Path) -> Path:
    """scontrol and sacctmgr stand-ins: slurmdbd has ``$REGISTERED`` registered until a
    reconfigure, then 127.0.0.1 (or still nothing when ``$STAYS_EMPTY``)."""
    stand_ins = {
        "scontrol": (
            'echo "scontrol $*" >> "$LOG"\n'
            'case "$1" in\n'
            '  show) echo "ClusterName             = lab" ;;\n'
            '  reconfigure) [ -z "${STAYS_EMPTY:-}" ] && echo 127.0.0.1 > "$(dirname "$LOG")/registered"\n'
            '    exit "${RECONFIGURE_RC:-0}" ;;\n'
            "esac\n"
        ),
        "sacctmgr": (
            'echo "sacctmgr $*" >> "$LOG"\n'
            'if [ -f "$(dirname "$LOG")/registered" ]; then cat "$(dirname "$LOG")/registered"\n'
            'else echo "${REGISTERED:-}"; fi\n'
        ),
        "sleep": "exit 0",  # the script's waits, made instant
    }
    for name, body in stand_ins.items():
        path = node / "bin" / name
        path.write_text(f"#!/bin/bash\n{body}")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return node


def test_the_script_leaves_a_registered_controller_alone(accounting_node: Path) -> None:
    out, calls = run(accounting_node, "FailoverDrillAccountingDocument", {}, REGISTERED="127.0.0.1")
    parsed = parse_node_output(out)
    assert (parsed.rc, parsed.values["registered_before"]) == (0, "127.0.0.1")
    assert "scontrol reconfigure" not in calls
    assert "sacctmgr -n -P show cluster lab format=ControlHost" in calls


def test_the_script_reconfigures_when_none_is_registered(accounting_node: Path) -> None:
    out, calls = run(accounting_node, "FailoverDrillAccountingDocument", {})
    parsed = parse_node_output(out)
    assert (parsed.rc, parsed.values["registered_before"], parsed.values["registered"]) == (
        0,
        "none",
        "127.0.0.1",
    )
    assert calls.count("scontrol reconfigure") == 1


@pytest.mark.parametrize(
    ("env", "error"),
    [
        ({"RECONFIGURE_RC": "1"}, "scontrol reconfigure exited 1"),
        ({"STAYS_EMPTY": "1"}, "slurmdbd names no controller after scontrol reconfigure"),
    ],
)
def test_the_script_fails_when_the_controller_stays_unregistered(
    accounting_node: Path, env: dict[str, str], error: str | None
) -> None:
    out, _ = run(accounting_node, "FailoverDrillAccountingDocument", {}, **env)
    parsed = parse_node_output(out)
    assert parsed.rc == 1
    attempt = attempt_after(parsed)
    assert (attempt["registered"], attempt["error"]) == (None, error)


def test_on_24_11_0_the_reconfigure_that_registers_again_is_skipped_and_said() -> None:
    # 24.11.0: a backup in control handling `scontrol reconfigure` before the primary resumes can
    # crash into a split brain (fixed in 24.11.1).
    phase = rules.measure(
        rules.new_phase("takeover", CTL2, 0.0, 10), unregistered("ctl2", slurm_version="24.11.0"), now=5.0
    )
    assert phase["next"] == "check-again"
    (skipped,) = phase["skipped"]
    assert skipped.startswith(
        "not registered with slurmdbd again (scontrol reconfigure skipped): Slurm 24.11.0 on ctl2"
    )
    assert "slurm-24.11.1-reconfigure-split-brain; fixed in 24.11.1" in skipped
    fixed = rules.measure(
        rules.new_phase("takeover", CTL2, 0.0, 10), unregistered("ctl2", slurm_version="24.11.1"), now=5.0
    )
    assert (fixed["next"], fixed.get("skipped")) == ("register", None)
