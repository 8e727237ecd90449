"""The probe's slurm_triggers section on a fake controller: strigger --get's rows that run the
stack's program, and this node's copy of the program."""

from __future__ import annotations

from pathlib import Path

from hyperpod_ha.commands import CommandResult
from hyperpod_ha.controllers.check import report_from_result
from hyperpod_ha.controllers.models import ControllerReport, ReportStatus, SlurmTriggersEvidence
from hyperpod_ha.slurm.triggers import TRIGGER_EVENTS
from tests.fakes.probe_host import NODE, ProbeHost

EVERY = tuple(event.name for event in TRIGGER_EVENTS)
TOPIC = "arn:aws:sns:eu-west-1:123456789012:slurm-failover"
HEADER = "TRIG_ID RES_TYPE   RES_ID TYPE                                OFFSET USER     FLAGS PROGRAM"


def with_program(controller: ProbeHost) -> Path:
    directory = controller.root / "libexec"
    directory.mkdir()
    program = directory / "slurm-trigger"
    program.write_text(f"#!/bin/bash\ntopic='{TOPIC}'\nregion='eu-west-1'\n")
    program.chmod(0o755)
    controller.env["HYPERPOD_HA_TRIGGER_DIR"] = str(directory)
    return program


def strigger_lists(controller: ProbeHost, rows: list[str], rc: int = 0) -> None:
    table = "\n".join([HEADER, *rows]) if rows else ""
    (controller.root / "triggers.txt").write_text(table + "\n" if table else "")
    controller.commands["strigger"] = (
        f"[ \"$1\" = --get ] || exit 2\ncat '{controller.root / 'triggers.txt'}'\nexit {rc}\n"
    )


def row(trig_id: int, event: str, program: str, flags: str = "PERM") -> str:
    return f"{trig_id:7d} slurmctld {'*':>7} {event:<35} {0:6d} {'slurm':<8} {flags:<5} {program}"


def report(controller: ProbeHost, **run: bool) -> ControllerReport:
    found = report_from_result(NODE, CommandResult(controller.run(**run), None, None, 1, "t"))
    assert found.status is ReportStatus.CHECKED
    return found


def test_every_trigger_installed_and_the_program_here(controller: ProbeHost) -> None:
    program = with_program(controller)
    rows = [row(i, event, f"{program} {event}") for i, event in enumerate(EVERY, 1)]
    strigger_lists(controller, [*rows, row(40, "down", "/opt/site/node_down.sh")])
    assert report(controller).slurm_triggers == SlurmTriggersEvidence(
        answered=True, missing_count=0, program_state="executable", program_topic=TOPIC
    )


def test_missing_triggers_are_named_and_counted(controller: ProbeHost) -> None:
    program = with_program(controller)
    strigger_lists(
        controller,
        [
            row(1, "backup_slurmctld_failure", f"{program} backup_slurmctld_failure"),
            row(2, "primary_slurmctld_failure", f"{program} primary_slurmctld_failure", flags=""),
        ],
    )
    found = report(controller).slurm_triggers
    assert (found.answered, found.missing_count) == (True, len(EVERY) - 1)
    assert found.missing == EVERY[1:9]  # the first eight kept


def test_no_trigger_and_no_program(controller: ProbeHost) -> None:
    controller.env["HYPERPOD_HA_TRIGGER_DIR"] = str(controller.root / "nowhere")
    strigger_lists(controller, [])
    found = report(controller).slurm_triggers
    assert (found.answered, found.missing_count, found.program_state, found.program_topic) == (
        True,
        len(EVERY),
        "missing",
        None,
    )


def test_a_slurmctld_that_does_not_answer_leaves_them_unknown(controller: ProbeHost) -> None:
    controller.commands["strigger"] = (
        'echo "slurm_get_triggers: Unable to contact slurm controller (connect failure)"\nexit 1\n'
    )
    found = report(controller).slurm_triggers
    assert (found.answered, found.missing_count) == (False, None)
    assert found.error == "strigger --get exited 1: Unable to contact slurm controller (connect failure)"


def test_no_strigger_on_the_node_is_not_known(controller: ProbeHost) -> None:
    found = report(controller, restricted_path=True).slurm_triggers
    assert (found.answered, found.missing_count) == (None, None)
    assert found.error == "strigger --get: command not found on the node"
