"""The lab's failover topic without the lab: the Slurm triggers' program, written by the stack's
own document and run as slurmctld runs it (its environment, no standard streams), publishes
through the node's stand-in ``aws`` into the outbox; the relay puts it on the embedded stack's
failover topic, and ControllerStatusFunction starts a run from Slurm's trigger."""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest

from hyperpod_ha.slurm.triggers import SUBJECT, trigger_message
from hyperpod_ha_dev.simulation.engine import EmbeddedRun
from hyperpod_ha_dev.simulation.lab.topic_relay import FailoverTopicRelay, outbox_entry
from tests.conftest import Embedded
from tests.unit.slurm_triggers import conftest as triggers_node
from tests.unit.slurm_triggers.conftest import SCRIPTS, Node

pytestmark = pytest.mark.usefixtures("embedded_held")


@dataclass(frozen=True)
class LabPaths:
    aws_cli_dir: Path
    sns_outbox: Path


@dataclass(frozen=True)
class Lab:
    """The two paths of the lab the relay uses."""

    paths: LabPaths


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    (tmp_path / "shared" / "log").mkdir(parents=True)
    return Lab(LabPaths(tmp_path / "aws-cli", tmp_path / "shared" / "log" / "sns_outbox.log"))


@pytest.fixture
def controller(tmp_path: Path) -> Node:
    """A controller with the node script's stand-ins for Slurm's commands (its hostname ctl1)."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for name, body in SCRIPTS.items():
        (tools / name).write_text(f"#!/bin/bash\n{body}\n")
        (tools / name).chmod(0o755)
    tmp_path.chmod(0o755)  # the install refuses a program directory others may write
    return Node(tmp_path)


@pytest.fixture
def run(embedded_held: Embedded) -> EmbeddedRun:
    return EmbeddedRun(embedded_held.site, embedded_held.stack, time.time())


def relay(lab: Lab, run: EmbeddedRun) -> FailoverTopicRelay:
    return FailoverTopicRelay(lab, run)  # type: ignore[arg-type]


def run_input(execution_arn: str) -> dict[str, object]:
    described = boto3.client("stepfunctions").describe_execution(executionArn=execution_arn)
    loaded: dict[str, object] = json.loads(described["input"])
    return loaded


def test_a_fired_triggers_program_starts_a_run_through_the_relay(
    lab: Lab, run: EmbeddedRun, controller: Node, monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = run.site.failover_topic_arn
    monkeypatch.setattr(triggers_node, "TOPIC", topic)  # the stack's document pins its own topic
    assert controller.run("install", topic).rc == 0
    with relay(lab, run) as relaying:
        assert (lab.paths.aws_cli_dir / "aws").is_file()
        # As slurmctld runs it: slurmctld's PATH (the lab puts the AWS CLI's directory on it),
        # the event then the trigger's res_id, no standard streams.
        done = subprocess.run(
            [str(controller.program), "backup_slurmctld_failure", "backup_slurmctld_failure"],
            env={"PATH": f"{lab.paths.aws_cli_dir}:{controller.root / 'bin'}"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0
    assert not (lab.paths.aws_cli_dir / "aws").exists()  # the relay's end: no topic is reachable
    (relayed,) = relaying.relayed
    assert relayed.subject == SUBJECT
    assert relayed.message.startswith("Slurm trigger backup_slurmctld_failure fired on ctl1 at ")
    assert relayed.written_at is not None
    assert relaying.refused == []
    (execution,) = run.stack.executions()
    trigger = run_input(execution["executionArn"])["trigger"]
    assert isinstance(trigger, dict)
    assert (trigger["source"], trigger["id"]) == ("slurm-trigger", relayed.message_id)
    assert trigger["summary"] == {
        "event": "backup_slurmctld_failure",
        "host": "ctl1",
        "at": relayed.message.rsplit(" ", 1)[-1],
    }


def test_only_new_lines_for_the_failover_topic_are_relayed(lab: Lab, run: EmbeddedRun) -> None:
    message = trigger_message("primary_database_failure", "ctl2", "2026-12-06T17:00:00Z")
    old = {"at": None, "topic_arn": run.site.failover_topic_arn, "subject": SUBJECT, "message": message}
    lab.paths.sns_outbox.write_text(json.dumps(old) + "\n")  # before the relay: not relayed
    with relay(lab, run) as relaying:
        with lab.paths.sns_outbox.open("a") as outbox:
            other = {**old, "topic_arn": "arn:aws:sns:us-east-1:999999999999:elsewhere"}
            outbox.write(json.dumps(other) + "\n")
            outbox.write("not json\n")
            outbox.write(json.dumps({**old, "at": "2026-12-06T17:00:01.250Z"}) + "\n")
            outbox.write(json.dumps(old)[:20])  # a line still being written: left for later
        relaying.relay_new()
        assert [r.written_at for r in relaying.relayed] == [1796576401.25]
        with lab.paths.sns_outbox.open("a") as outbox:
            outbox.write(json.dumps(old)[20:] + "\n")
    assert len(relaying.relayed) == 2
    assert [why.split(":")[0] for why in relaying.refused] == [
        "published on 'arn",
        "not a line of the stand-in's",
    ]
    assert len(run.stack.executions()) == 1  # the second joined the first's run


@pytest.mark.parametrize(
    "line",
    [
        "[]",
        '{"topic_arn": 1, "message": "m"}',
        '{"topic_arn": "t"}',
        '{"topic_arn": "t", "message": "m", "subject": 3}',
    ],
)
def test_a_line_that_is_not_the_stand_ins_is_none(line: str) -> None:
    assert outbox_entry(line) is None
