"""The Slurm triggers' node script (install, list) and the program it writes, run for real."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from hyperpod_ha.commands import CommandRequest
from hyperpod_ha.node_scripts import node_script
from hyperpod_ha.slurm.strigger_get import TRIGGER_PROGRAM_PATH, installed_events, parse_strigger_get
from hyperpod_ha.slurm.triggers import SUBJECT, TRIGGER_EVENTS, parse_trigger_message
from hyperpod_ha.slurm_triggers.node import triggers_result
from hyperpod_ha_dev.simulation.agent import DocumentParametersRejected, agent_command_line
from tests.unit.slurm_triggers.conftest import DOCUMENT, TOPIC, Node, TemplateDocuments

EVERY = tuple(event.name for event in TRIGGER_EVENTS)
SCRIPT = node_script("hyperpod_ha.slurm_triggers", "slurm_triggers_node.sh")


def ours(node: Node) -> tuple[str, ...]:
    rows = parse_strigger_get(node.triggers.read_text()) if node.triggers.exists() else ()
    return installed_events(rows, str(node.program))


def test_the_scripts_events_and_program_are_the_runtimes() -> None:
    (events,) = re.findall(r'^EVENTS="([a-z_ ]+)"$', SCRIPT, re.MULTILINE)
    assert tuple(events.split()) == EVERY
    # Fixed: nothing in the environment moves where a root script writes.
    assert "\nPROGRAM_DIR=/usr/local/libexec/hyperpod-ha\n" in SCRIPT
    assert "HYPERPOD_HA_TRIGGER_DIR" not in SCRIPT
    assert 'PROGRAM="$PROGRAM_DIR/slurm-trigger"' in SCRIPT
    assert TRIGGER_PROGRAM_PATH == "/usr/local/libexec/hyperpod-ha/slurm-trigger"


def test_install_writes_the_program_and_sets_every_trigger_as_slurm_user(node: Node) -> None:
    output = node.run("install")
    result = triggers_result(output)
    assert (result.rc, result.installed, result.already, result.failed) == (0, EVERY, (), ())
    assert result.complete
    assert result.program_action == "written"
    assert output.values["program"] == str(node.program)
    assert output.values["slurm_user"] == "slurm"
    mode = node.program.stat().st_mode
    assert stat.S_IMODE(mode) == 0o755
    assert node.program.stat().st_uid == os.getuid()
    assert list(node.program_dir.iterdir()) == [node.program]  # no temporary file left
    text = node.program.read_text()
    assert f"topic='{TOPIC}'" in text
    assert "region='eu-west-1'" in text
    assert re.findall(r"arn:aws[^'\s]*", text) == [TOPIC]  # nothing else to reach
    # Each set once, as SlurmUser, permanent, the event the program's argument.
    sets = [call for call in node.calls() if call.startswith("strigger --set")]
    assert sets == [
        f"strigger --set --flags=PERM --{event} --program={node.program} {event} as {_me()} slurm"
        for event in EVERY
    ]
    assert ours(node) == EVERY


def test_a_second_install_sets_nothing(node: Node) -> None:
    node.run("install")
    before = node.triggers.read_text()
    calls = len(node.calls())
    result = triggers_result(node.run("install"))
    assert (result.rc, result.installed, result.already, result.failed) == (0, (), EVERY, ())
    assert result.program_action == "unchanged"
    assert result.complete
    assert node.triggers.read_text() == before
    assert not [call for call in node.calls()[calls:] if call.startswith("strigger --set")]


def test_install_sets_only_what_is_not_ours(node: Node) -> None:
    """Ours: permanent, our program with the event. Another program, or one that fires once, is not."""
    node.program_dir.mkdir(parents=True)
    program = node.program
    row = "{:7d} slurmctld       * {:<35} {:6d} {:<8} {:<5} {}\n"
    node.triggers.write_text(
        row.format(1, "backup_slurmctld_failure", 0, "slurm", "PERM", f"{program} backup_slurmctld_failure")
        + row.format(2, "primary_slurmctld_failure", 0, "slurm", "", f"{program} primary_slurmctld_failure")
        + row.format(3, "backup_slurmctld_assumed_control", 0, "slurm", "PERM", "/opt/site/notify.sh")
    )
    result = triggers_result(node.run("install"))
    assert result.already == ("backup_slurmctld_failure",)
    assert result.installed == tuple(e for e in EVERY if e != "backup_slurmctld_failure")
    assert ours(node) == EVERY


def test_list_reads_and_changes_nothing(node: Node) -> None:
    output = node.run("list")
    result = triggers_result(output)
    assert (result.rc, result.program_state, result.missing) == (0, "missing", EVERY)
    assert not node.program.exists()
    node.run("install")
    calls = len(node.calls())
    output = node.run("list")
    assert not [call for call in node.calls()[calls:] if call.startswith("strigger --set")]
    assert (triggers_result(output).missing, output.values["installed"].split(",")) == ((), list(EVERY))
    assert (output.values["program_state"], output.values["program_topic_matches"]) == ("executable", "yes")
    other = "arn:aws:sns:eu-west-1:123456789012:other"
    with pytest.raises(DocumentParametersRejected):  # the document admits the stack's topic only
        node.run("list", topic=other)


def test_the_document_admits_only_the_modes_and_the_stacks_topic() -> None:
    documents = TemplateDocuments()
    for parameters in (
        {"mode": ["clear"], "topicArn": [TOPIC]},
        {"mode": ["install"], "topicArn": [TOPIC + "x"]},
        {"mode": ["install"], "topicArn": [f"{TOPIC} ; id"]},
        {"mode": ["install"]},
    ):
        with pytest.raises(DocumentParametersRejected):
            agent_command_line(CommandRequest("t", DOCUMENT, 30, parameters), documents)


def test_a_slurmctld_that_does_not_answer_sets_nothing(node: Node) -> None:
    output = node.run("install", STRIGGER_DOWN="1")
    result = triggers_result(output)
    assert result.rc == 1
    assert not result.complete
    assert result.error is not None
    assert "Unable to contact slurm controller" in result.error
    assert not node.triggers.read_text()


def test_a_refused_set_is_a_failed_event(node: Node) -> None:
    output = node.run("install", STRIGGER_SET_RC="1")
    result = triggers_result(output)
    assert (result.rc, result.installed, result.failed) == (1, (), EVERY)
    assert "Access/permission denied" in output.values["set_error_backup_slurmctld_failure"]


def test_slurm_user_being_this_user_runs_strigger_directly(node: Node) -> None:
    result = triggers_result(node.run("install", SLURM_USER=_me()))
    assert result.complete
    assert not [call for call in node.calls() if call.startswith("runuser")]


def test_a_program_directory_others_may_write_is_refused(node: Node) -> None:
    node.program_dir.mkdir(parents=True)
    node.program_dir.chmod(0o777)
    output = node.run("install")
    assert output.rc == 1
    assert output.values["program_error"] == f"{node.program_dir} is writable by others"
    assert not node.program.exists()
    assert not node.triggers.exists()


def _me() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


# --- the program slurmctld runs --------------------------------------------------------------


def installed_program(node: Node, tmp_path: Path, aws_rc: int) -> tuple[Path, dict[str, str]]:
    """The program as install wrote it, and a stand-in ``aws`` and ``logger`` that record."""
    node.run("install")
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "aws").write_text(
        '#!/bin/bash\nprintf "%s\\n" "$@" > "$RECORD/aws.args"\n'
        'echo "An error occurred (AuthorizationError): not allowed $(printf "x%.0s" $(seq 1 500))" >&2\n'
        f"exit {aws_rc}\n"
    )
    (tools / "logger").write_text('#!/bin/bash\nprintf "%s\\n" "$@" > "$RECORD/logger.args"\n')
    (tools / "hostname").write_text("#!/bin/bash\necho ctl2\n")
    for tool in tools.iterdir():
        tool.chmod(0o755)
    env = {"PATH": f"{tools}:/usr/bin:/bin", "RECORD": str(tmp_path)}
    return node.program, env


def test_the_program_publishes_the_one_message_form_to_the_topic(node: Node, tmp_path: Path) -> None:
    program, env = installed_program(node, tmp_path, aws_rc=0)
    # As slurmctld runs it: the event the trigger's argument, then the trigger's res_id; no
    # standard streams (closeall), so nothing it prints matters.
    done = subprocess.run(
        [str(program), "backup_slurmctld_failure", "backup_slurmctld_failure"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0
    args = (tmp_path / "aws.args").read_text().splitlines()
    assert args[:8] == ["sns", "publish", "--region", "eu-west-1", "--topic-arn", TOPIC, "--subject", SUBJECT]
    assert args[8] == "--message"
    message = parse_trigger_message(SUBJECT, args[9])
    assert (message.event.name, message.host) == ("backup_slurmctld_failure", "ctl2")
    assert not (tmp_path / "logger.args").exists()


def test_a_failed_publish_is_one_bounded_syslog_line(node: Node, tmp_path: Path) -> None:
    program, env = installed_program(node, tmp_path, aws_rc=255)
    done = subprocess.run([str(program), "primary_database_failure"], env=env, timeout=30, check=False)
    assert done.returncode == 255
    args = (tmp_path / "logger.args").read_text().splitlines()
    assert args[:4] == ["-t", "hyperpod-ha-slurm-trigger", "-p", "daemon.warning"]
    (line,) = args[5:]
    assert line.startswith(
        "publish failed (exit 255): Slurm trigger primary_database_failure fired on ctl2 at "
    )
    assert len(line) < 500
