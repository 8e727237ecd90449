"""The roll-out to slurmdbd, against controllers that really run the document's command."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from hyperpod_ha.commands import CommandResult
from hyperpod_ha.rotation.rollout import (
    InvalidControllers,
    NodeReportInvalid,
    RolloutSettings,
    parse_node_report,
    roll_out,
)
from hyperpod_ha.rotation.rollout_document import GENERIC_DOCUMENT
from tests.conftest import CURRENT_USER as ME
from tests.fakes.rollout_nodes import (
    CONF_TEMPLATE,
    DOCUMENT,
    SECRET_ARN,
    RolloutNode,
    RolloutRunner,
)

OLD = ("admin", "Old-Password-1")
NEW = ("admin_clone", "New-Password-2:x@y")


class Failures:
    def __init__(self) -> None:
        self.calls: list[tuple[dict[str, Any], str]] = []

    def __call__(self, controller: dict[str, Any], reason: str) -> None:
        self.calls.append((controller, reason))


def secret_json(user: str, password: str) -> str:
    return json.dumps({"username": user, "password": password}, separators=(",", ":"))


@pytest.fixture
def runner(tmp_path: Path) -> RolloutRunner:
    valid = {OLD, NEW}
    return RolloutRunner(
        tmp_path, secret_source=lambda: secret_json(*NEW), accepts=lambda u, p: (u, p) in valid
    )


def settings(**overrides: Any) -> RolloutSettings:
    values: dict[str, Any] = {
        "secret_arn": SECRET_ARN,
        "document": DOCUMENT,
        "deadline_seconds": 60,
        "owner": ME,
        "verify_seconds": 2,
    }
    values.update(overrides)
    return RolloutSettings(**values)


def controllers(runner: RolloutRunner, count: int) -> list[RolloutNode]:
    return [runner.add(f"ctl{i}", *OLD) for i in range(1, count + 1)]


def assert_no_password_anywhere(runner: RolloutRunner, *texts: str) -> None:
    passwords = (OLD[1], NEW[1])
    seen = [json.dumps(r.parameters) for r in runner.requests]
    seen += [json.dumps(argv) for argv in runner.argv_seen]
    seen += [json.dumps(c.calls()) for c in runner.controllers.values()]
    seen += list(texts)
    for text in seen:
        for password in passwords:
            assert password not in text


def test_every_controller_gets_the_new_credentials_in_turn(runner: RolloutRunner) -> None:
    nodes = controllers(runner, 3)
    failures = Failures()
    report = roll_out([n.as_json() for n in nodes], runner, settings(), failures)

    assert report.complete
    assert [c.outcome for c in report.controllers] == ["updated"] * 3
    assert [c.storage_user for c in report.controllers] == ["admin_clone"] * 3
    assert [r.target for r in runner.requests] == [n.as_json()["target"] for n in nodes]
    assert failures.calls == []
    for node in nodes:
        assert node.credentials() == {"storageuser": NEW[0], "storagepass": NEW[1]}
        assert node.running() == {"storageuser": NEW[0], "storagepass": NEW[1]}
        assert node.restarts() == ["admin_clone"]
        mode = node.conf.stat()
        assert stat.S_IMODE(mode.st_mode) == 0o600
        assert mode.st_uid == os.getuid()
        expected = CONF_TEMPLATE.format(user=NEW[0], password=NEW[1])
        assert node.conf.read_text() == expected
        assert ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster"] in node.calls()
    assert_no_password_anywhere(runner, json.dumps(report.to_json()))


def test_the_sed_backup_is_brought_to_the_new_credentials_with_mode_600(runner: RolloutRunner) -> None:
    # HyperPod's lifecycle script edits slurmdbd.conf with `sed -i.bak`: the .bak keeps the
    # first password, world-readable, forever.
    (node,) = controllers(runner, 1)
    backup = node.conf.with_name("slurmdbd.conf.bak")
    backup.write_text(CONF_TEMPLATE.format(user=OLD[0], password=OLD[1]))
    backup.chmod(0o644)
    report = roll_out([node.as_json()], runner, settings(), Failures())
    assert report.complete
    assert OLD[1] not in backup.read_text()
    assert backup.read_text() == CONF_TEMPLATE.format(user=NEW[0], password=NEW[1])
    info = backup.lstat()
    assert (stat.S_ISREG(info.st_mode), stat.S_IMODE(info.st_mode), info.st_uid) == (True, 0o600, os.getuid())
    assert sorted(p.name for p in node.conf.parent.iterdir()) == ["slurmdbd.conf", "slurmdbd.conf.bak"]


def test_a_symlink_named_like_the_backup_is_removed_not_followed(
    runner: RolloutRunner, tmp_path: Path
) -> None:
    (node,) = controllers(runner, 1)
    victim = tmp_path / "victim"
    victim.write_text("untouched\n")
    node.conf.with_name("slurmdbd.conf.bak").symlink_to(victim)
    report = roll_out([node.as_json()], runner, settings(), Failures())
    assert report.complete
    assert victim.read_text() == "untouched\n"
    assert not node.conf.with_name("slurmdbd.conf.bak").exists()
    assert not node.conf.with_name("slurmdbd.conf.bak").is_symlink()


def test_the_roll_out_stops_at_the_first_failing_controller(runner: RolloutRunner) -> None:
    first, second, third = controllers(runner, 3)
    second.fail_restarts(once=True)
    original = third.conf.read_text()
    failures = Failures()

    report = roll_out([n.as_json() for n in (first, second, third)], runner, settings(), failures)

    assert not report.complete
    assert [c.outcome for c in report.controllers] == ["updated", "failed", "not_attempted"]
    failed = report.controllers[1]
    assert failed.reason is not None
    assert failed.reason.startswith("restart: systemctl restart slurmdbd exited 1")
    assert failures.calls == [(second.as_json(), failed.reason)]
    # The second controller went back to the previous user, which still works (alternating).
    assert failed.restored_previous is True
    assert second.credentials() == {"storageuser": OLD[0], "storagepass": OLD[1]}
    assert second.running() == {"storageuser": OLD[0], "storagepass": OLD[1]}
    # The third was left exactly as it was: no command, no restart.
    assert third.conf.read_text() == original
    assert third.calls() == []
    assert third.restarts() == []
    assert [r.target for r in runner.requests] == [first.as_json()["target"], second.as_json()["target"]]
    assert_no_password_anywhere(runner, json.dumps(report.to_json()), json.dumps(failures.calls))


def test_a_controller_whose_slurmdbd_cannot_restart_at_all_reports_it(runner: RolloutRunner) -> None:
    (node,) = controllers(runner, 1)
    node.fail_restarts()
    report = roll_out([node.as_json()], runner, settings(), Failures())
    (outcome,) = report.controllers
    assert (outcome.outcome, outcome.restored_previous) == ("failed", False)
    # The file is back as it was even though slurmdbd could not be restarted with it.
    assert node.credentials() == {"storageuser": OLD[0], "storagepass": OLD[1]}


def test_slurmdbd_refusing_the_new_credentials_puts_the_previous_user_back(tmp_path: Path) -> None:
    runner = RolloutRunner(
        tmp_path, secret_source=lambda: secret_json(*NEW), accepts=lambda u, p: (u, p) == OLD
    )
    (node,) = controllers(runner, 1)
    original = node.conf.read_bytes()
    failures = Failures()

    report = roll_out([node.as_json()], runner, settings(verify_seconds=1), failures)

    (outcome,) = report.controllers
    assert outcome.outcome == "failed"
    assert outcome.reason is not None
    assert outcome.reason.startswith("verify: slurmdbd did not answer within 1 s")
    assert "Connection refused" in outcome.reason
    assert outcome.restored_previous is True
    assert node.conf.read_bytes() == original
    assert node.running() == {"storageuser": OLD[0], "storagepass": OLD[1]}
    assert node.restarts() == ["admin_clone", "admin"]
    assert len(failures.calls) == 1


def test_a_single_user_password_is_not_put_back_since_it_no_longer_works(tmp_path: Path) -> None:
    single_new = (OLD[0], "New-Password-3")
    runner = RolloutRunner(
        tmp_path, secret_source=lambda: secret_json(*single_new), accepts=lambda u, p: False
    )
    (node,) = controllers(runner, 1)
    report = roll_out([node.as_json()], runner, settings(verify_seconds=1), Failures())
    (outcome,) = report.controllers
    assert (outcome.outcome, outcome.restored_previous) == ("failed", False)
    assert node.credentials() == {"storageuser": single_new[0], "storagepass": single_new[1]}
    assert node.restarts() == ["admin"]


def test_an_unreachable_controller_fails_the_roll_out_there(runner: RolloutRunner) -> None:
    first, second = controllers(runner, 2)
    first.unreachable = True
    failures = Failures()
    report = roll_out([first.as_json(), second.as_json()], runner, settings(), failures)
    assert [c.outcome for c in report.controllers] == ["failed", "not_attempted"]
    assert report.controllers[0].reason == (
        f"TargetUnreachable: TargetNotConnected: {first.as_json()['target']} is not connected"
    )
    assert failures.calls == [(first.as_json(), report.controllers[0].reason)]
    assert second.credentials() == {"storageuser": OLD[0], "storagepass": OLD[1]}


def test_a_document_iam_does_not_allow_is_a_failure_not_a_crash(runner: RolloutRunner) -> None:
    (node,) = controllers(runner, 1)
    failures = Failures()
    report = roll_out([node.as_json()], runner, settings(document="Some-Other-Document"), failures)
    assert report.controllers[0].reason is not None
    assert report.controllers[0].reason.startswith("AccessDenied: ")
    assert len(failures.calls) == 1


def test_the_generic_document_carries_the_rendered_command_and_still_no_password(
    runner: RolloutRunner,
) -> None:
    (node,) = controllers(runner, 1)
    generic = settings(document=GENERIC_DOCUMENT, owner="slurm")  # the runner maps slurm to ME
    report = roll_out([node.as_json()], runner, generic, Failures())
    assert report.complete
    (request,) = runner.requests
    assert list(request.parameters) == ["command"]
    assert SECRET_ARN in request.parameters["command"][0]
    assert_no_password_anywhere(runner)


def test_the_node_script_runs_on_the_oldest_python_of_controller_images(tmp_path: Path) -> None:
    # The interpreter itself before a pyenv shim: a shim puts its own bin first on the PATH (with
    # another Python's aws CLI in it), where the node's aws must be the stand-in.
    candidates = [
        *sorted(Path("/root/.pyenv/versions").glob("3.8.*/bin/python3.8")),
        shutil.which("python3.8"),
    ]
    python38 = next((str(c) for c in candidates if c and os.access(c, os.X_OK)), None)
    if python38 is None:
        pytest.skip(
            "no python3.8 on this machine (Ubuntu 20.04 controllers run 3.8): install one to run this"
        )
    valid = {OLD, NEW}
    runner = RolloutRunner(
        tmp_path,
        secret_source=lambda: secret_json(*NEW),
        accepts=lambda u, p: (u, p) in valid,
        python=python38,
    )
    (node,) = controllers(runner, 1)
    report = roll_out([node.as_json()], runner, settings(), Failures())
    assert report.complete, report.to_json()


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ([], "no controllers"),
        ([{"target": "t"}], "instance_id"),
        ([{"instance_id": "i-1", "target": ""}], "target"),
        (["i-1"], "not an object"),
    ],
)
def test_bad_controller_lists_are_refused_before_anything_runs(
    runner: RolloutRunner, given: list[Any], reason: str
) -> None:
    with pytest.raises(InvalidControllers, match=reason):
        roll_out(given, runner, settings(), Failures())
    assert runner.requests == []


def result(stdout: str, exit_code: int | None = 0, stderr: str | None = "") -> CommandResult:
    return CommandResult(stdout, stderr, exit_code, 0.1, "test")


def test_the_report_is_the_last_json_line_even_with_merged_output() -> None:
    stdout = 'noise\n{"not": "a report"}\nprogress\n{"outcome": "updated", "storage_user": "u"}\n'
    assert parse_node_report(result(stdout, exit_code=None))["storage_user"] == "u"


@pytest.mark.parametrize(
    ("stdout", "exit_code", "stderr", "reason"),
    [
        ("", 1, "Traceback ...\nNameError: boom\n", "no report (exit code 1; NameError: boom)"),
        ('{"outcome": "updated"}', 1, "", "reported success but exited 1"),
        ("{broken json", 0, None, "no report (exit code 0; no stderr)"),
    ],
)
def test_unreadable_reports_are_failures(
    stdout: str, exit_code: int, stderr: str | None, reason: str
) -> None:
    with pytest.raises(NodeReportInvalid) as caught:
        parse_node_report(result(stdout, exit_code, stderr))
    assert reason in str(caught.value)
