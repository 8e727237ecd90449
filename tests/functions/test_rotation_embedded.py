"""moto's RotateSecret drives the real rotation function through the embedded stack (the
template's RotationSchedule wires it), against the real MariaDB, and the roll-out reaches
every controller the embedded cluster lists."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest

from hyperpod_ha_dev.embedded.site import create_site, embedded_aws
from hyperpod_ha_dev.embedded.stack import create_stack
from tests.conftest import CURRENT_USER, ROOT, UseTransport
from tests.fakes.rollout_nodes import RolloutRunner, credentials_in
from tests.real.mariadb import Account, MariaDBLab, login_works, mariadb_lab

pytestmark = [pytest.mark.mariadb, pytest.mark.slow]
__all__ = ["mariadb_lab"]  # the module fixture, used below


@dataclass
class Rotation:
    site: Any
    stack: Any
    runner: RolloutRunner = field(repr=False)
    account: Account = field(repr=False)  # its password must never reach the test output


@pytest.fixture
def rotation(mariadb_lab: MariaDBLab, tmp_path: Path, use_transport: UseTransport) -> Iterator[Rotation]:
    account = mariadb_lab.create_user("embedded")
    with embedded_aws():
        site = create_site(
            secret={"username": account.user, "password": account.password}, db_host="127.0.0.1"
        )
        # Alternating users on a 30-day schedule (the defaults are single and no schedule).
        site.extra_parameters.update(RotationStrategy="alternating", RotationDays=30)
        stack = create_stack(ROOT, site.stack_parameters())
        secrets = boto3.client("secretsmanager")

        def current_secret() -> str:
            # as the node does: `aws secretsmanager get-secret-value --version-stage AWSCURRENT`
            answer = secrets.get_secret_value(SecretId=site.secret_arn, VersionStage="AWSCURRENT")
            return str(answer["SecretString"])

        runner = RolloutRunner(
            base=tmp_path,
            secret_source=current_secret,
            accepts=login_works,
        )
        runner.document = stack.ref("SlurmdbdRolloutDocument")
        # The controllers the embedded cluster lists, each with slurmdbd on the old credentials.
        for controller in site.controllers:
            fake = runner.add(controller.hostname, account.user, account.password)
            old_target = next(target for target, c in runner.controllers.items() if c is fake)
            del runner.controllers[old_target]
            runner.controllers[
                f"sagemaker-cluster:{site.cluster_name}_{site.controller_group}-{controller.instance_id}"
            ] = fake
        use_transport("fake-node", lambda: runner)
        stack.override_environment(
            "RotateDbSecretFunction", COMMAND_TRANSPORT="fake-node", SLURMDBD_OWNER=CURRENT_USER
        )
        yield Rotation(site, stack, runner, account)


def test_rotate_secret_rotates_and_rolls_out(rotation: Rotation, capfd: pytest.CaptureFixture[str]) -> None:
    site, stack, runner = rotation.site, rotation.stack, rotation.runner
    old_user, old_password = rotation.account.user, rotation.account.password
    secrets = boto3.client("secretsmanager")
    # moto forgets the configured function unless it is named again (AWS keeps it).
    function_arn = stack.function("RotateDbSecretFunction").arn
    assert secrets.describe_secret(SecretId=site.secret_arn)["RotationLambdaARN"] == function_arn
    secrets.rotate_secret(SecretId=site.secret_arn, RotationLambdaARN=function_arn, RotateImmediately=True)

    current = secrets.get_secret_value(SecretId=site.secret_arn)["SecretString"]
    # compact: the lifecycle script greps it
    assert ": " not in current
    assert ", " not in current
    new = json.loads(current)
    assert new["username"] == f"{old_user}_clone"
    assert new["password"] != old_password, "the password did not change"
    assert login_works(new["username"], new["password"])
    assert login_works(old_user, old_password)  # alternating users: the old login still works
    for controller in runner.controllers.values():
        applied = credentials_in(controller.conf.read_text())
        # compared, never shown: a failing assert must not print a password
        assert applied["storageuser"] == new["username"]
        assert applied["storagepass"] == new["password"], "slurmdbd.conf does not hold the new password"
        assert len(controller.restarts()) == 1
        assert controller.running()["storageuser"] == new["username"]
    output = capfd.readouterr()
    for password in (old_password, new["password"]):
        assert password not in output.out
        assert password not in output.err
