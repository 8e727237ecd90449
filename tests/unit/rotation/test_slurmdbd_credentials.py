"""The node script's parts: reading the secret, rewriting slurmdbd.conf, replacing it atomically."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.rotation import slurmdbd_credentials as node
from hyperpod_ha_dev.simulation import node_aws_cli
from tests.conftest import CURRENT_USER as ME

CONF = (
    "# written by the lifecycle scripts\r\n"
    "DbdHost=localhost  #YOUR_MASTER_IP_ADDRESS_OR_NAME\r\n"
    "storageuser = admin # who\r\n"
    "StoragePass=Old-Password-1\r\n"
    "StorageHost=db.example.internal\r\n"
    "#StoragePass=commented-out\r\n"
    "StorageLoc=slurm_acct_db"
)


def test_only_the_two_credential_lines_change() -> None:
    text, previous_user, changed = node.rewrite_conf(CONF, "admin_clone", "New-Password-2")
    assert previous_user == "admin"
    assert changed
    assert text == (
        "# written by the lifecycle scripts\r\n"
        "DbdHost=localhost  #YOUR_MASTER_IP_ADDRESS_OR_NAME\r\n"
        "storageuser =admin_clone\r\n"
        "StoragePass=New-Password-2\r\n"
        "StorageHost=db.example.internal\r\n"
        "#StoragePass=commented-out\r\n"
        "StorageLoc=slurm_acct_db\n"
    )


def test_missing_keys_are_added_and_duplicates_all_replaced() -> None:
    text, previous_user, changed = node.rewrite_conf("StoragePass=a\nStoragePass=b\n", "u", "p")
    assert text == "StoragePass=p\nStoragePass=p\nStorageUser=u\n"
    assert previous_user is None
    assert changed


def test_rewriting_with_the_same_credentials_reports_no_password_change() -> None:
    text, previous_user, changed = node.rewrite_conf("StorageUser=u\nStoragePass=p\n", "u", "p")
    assert text == "StorageUser=u\nStoragePass=p\n"
    assert previous_user == "u"
    assert not changed


@given(
    others=st.lists(
        st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40).filter(
            lambda line: not node._SETTING.match(line) and "\n" not in line and "\r" not in line
        ),
        max_size=8,
    )
)
def test_every_other_line_survives_byte_for_byte(others: list[str]) -> None:
    conf = "".join(f"{line}\n" for line in others) + "StorageUser=a\nStoragePass=b\n"
    text, _, _ = node.rewrite_conf(conf, "c", "d")
    assert text == "".join(f"{line}\n" for line in others) + "StorageUser=c\nStoragePass=d\n"


@pytest.mark.parametrize(
    ("secret", "reason"),
    [
        ("not json", "not JSON"),
        ("[1]", "not an object"),
        ('{"username":"u"}', "password"),
        ('{"username":"u u","password":"p"}', "username"),
        ('{"username":"u","password":"p#q"}', "password"),
        ('{"username":"u","password":"p q"}', "password"),
        ('{"username":"u","password":"p\\"q"}', "password"),
    ],
)
def test_secrets_slurmdbd_conf_cannot_hold_are_refused(secret: str, reason: str) -> None:
    with pytest.raises(node.NodeFailure, match=reason) as caught:
        node.credentials_from(secret)
    assert caught.value.stage == "fetch"
    assert "p#q" not in caught.value.reason
    assert "p q" not in caught.value.reason


def test_the_file_is_replaced_with_mode_600_and_the_owner(tmp_path: Path) -> None:
    target = tmp_path / "etc" / "slurmdbd.conf"
    target.parent.mkdir()
    target.write_text("old\n")
    target.chmod(0o644)
    link = tmp_path / "slurm" / "slurmdbd.conf"
    link.parent.mkdir()
    link.symlink_to(target)
    node.replace_file(node.conf_file(str(link)), "new\n", ME)
    assert link.is_symlink(), "the symlink itself stays; the file it points at is replaced"
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.stat().st_uid == os.getuid()
    assert sorted(p.name for p in target.parent.iterdir()) == ["slurmdbd.conf"], "no temporary file left"


def test_an_unknown_owner_leaves_the_file_alone(tmp_path: Path) -> None:
    target = tmp_path / "slurmdbd.conf"
    target.write_text("old\n")
    with pytest.raises(node.NodeFailure, match="no user"):
        node.replace_file(str(target), "new\n", "no-such-user-here")
    assert target.read_text() == "old\n"


def test_a_refused_secret_is_a_fetch_failure(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The instance role may not read it (here: the stand-in serves another secret).
    node_aws_cli.install(tmp_path, sys.executable)
    node_aws_cli.serve(tmp_path, "arn:aws:secretsmanager:us-east-1:123456789012:secret:other", "{}")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(node.NodeFailure) as caught:
        node.fetch_secret("arn:aws:secretsmanager:us-east-1:123456789012:secret:x")
    assert caught.value.stage == "fetch"
    assert "aws exited 254: An error occurred (AccessDeniedException)" in caught.value.reason


def test_the_secret_comes_from_the_aws_cli_and_from_nothing_else(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The seam the script had for the lab (SLURMDBD_SECRET_COMMAND) is gone: a variable set in a
    # root shell's environment cannot point it at another secret or command.
    arn = "arn:aws:secretsmanager:eu-west-2:123456789012:secret:db-AbCdEf"
    node_aws_cli.install(tmp_path, sys.executable)
    node_aws_cli.serve(tmp_path, arn, '{"username":"u","password":"p"}')
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SLURMDBD_SECRET_COMMAND", 'echo \'{"username":"evil","password":"x"}\'')
    assert node.credentials_from(node.fetch_secret(arn)) == ("u", "p")
    # No variable is read but in main, which only adds Slurm's bin directory to the PATH.
    assert "os.environ" not in Path(node.__file__).read_text().split("def main", 1)[0]


def test_the_node_asks_secrets_manager_in_the_secrets_region(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_aws = tmp_path / "aws"
    fake_aws.write_text(f"#!{sys.executable}\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    fake_aws.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    arn = "arn:aws:secretsmanager:eu-west-2:123456789012:secret:db-AbCdEf"
    assert json.loads(node.fetch_secret(arn)) == [
        "secretsmanager",
        "get-secret-value",
        "--secret-id",
        arn,
        "--version-stage",
        "AWSCURRENT",
        "--query",
        "SecretString",
        "--output",
        "text",
        "--region",
        "eu-west-2",
    ]


def test_bad_arguments_print_a_failure_report() -> None:
    done = subprocess.run(
        [sys.executable, node.__file__, "only-one-argument"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert json.loads(done.stdout)["stage"] == "arguments"


def test_only_a_file_named_slurmdbd_conf_is_rewritten(tmp_path: Path) -> None:
    other = tmp_path / "shadow"
    other.write_text("root:x:0\n")
    with pytest.raises(node.NodeFailure, match=r"not a slurmdbd\.conf") as caught:
        node.conf_file(str(other))
    assert caught.value.stage == "arguments"
    # A slurmdbd.conf that is a symlink to another file is refused too.
    link = tmp_path / "etc" / "slurmdbd.conf"
    link.parent.mkdir()
    link.symlink_to(other)
    with pytest.raises(node.NodeFailure, match="points at a file not named"):
        node.conf_file(str(link))
    (tmp_path / "dir" / "slurmdbd.conf").mkdir(parents=True)
    with pytest.raises(node.NodeFailure, match="not a regular file"):
        node.conf_file(str(tmp_path / "dir" / "slurmdbd.conf"))
    assert other.read_text() == "root:x:0\n"


def test_the_script_refuses_another_file_before_fetching_anything(tmp_path: Path) -> None:
    target = tmp_path / "authorized_keys"
    target.write_text("ssh-ed25519 AAAA\n")
    done = subprocess.run(
        [
            sys.executable,
            node.__file__,
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:x",
            str(target),
            ME,
            "1",
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": "/nonexistent"},  # no aws: fetching would fail, not refuse
    )
    assert done.returncode == 1
    assert json.loads(done.stdout)["stage"] == "arguments"
    assert target.read_text() == "ssh-ed25519 AAAA\n"


def test_the_service_restarted_is_always_slurmdbd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "argv"
    fake = tmp_path / "systemctl"
    fake.write_text(f'#!/bin/sh\necho "$@" >>{log}\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    node.restart()
    assert log.read_text() == "restart slurmdbd\n"


def test_the_backup_is_rewritten_in_place_with_mode_600(tmp_path: Path) -> None:
    conf = tmp_path / "slurmdbd.conf"
    backup = tmp_path / "slurmdbd.conf.bak"
    backup.write_text(CONF)
    backup.chmod(0o644)
    assert node.scrub_backup(str(conf), "admin_clone", "New-Password-2", ME) == "rewritten"
    assert "Old-Password-1" not in backup.read_text()
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert node.scrub_backup(str(tmp_path / "none" / "slurmdbd.conf"), "u", "p", ME) == "absent"


def test_a_backup_that_is_a_symlink_is_removed_and_its_target_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    backup = tmp_path / "slurmdbd.conf.bak"
    backup.symlink_to(victim)
    assert node.scrub_backup(str(tmp_path / "slurmdbd.conf"), "u", "p", ME) == "removed"
    assert not backup.is_symlink()
    assert victim.read_text() == "keep\n"
