"""The whole RotateDbSecretFunction against the real MariaDB server: rotations, roll-outs, and
not one password in any log line (see tests/real/test_rotation_mariadb.py)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from hyperpod_ha.controllers.models import ClusterControllers, Controller
from hyperpod_ha.observability import logger as powertools_logger
from hyperpod_ha_dev.embedded.functions import LambdaContext
from tests.conftest import CURRENT_USER, load_function_module
from tests.fakes.rollout_nodes import DOCUMENT, RolloutRunner
from tests.fakes.rotation_function import fake_commands
from tests.fakes.rotation_service import RotationService, raw_value, value
from tests.functions.rotation_rig import lease_places
from tests.real.mariadb import HOST, PORT, MariaDBLab, login_works, mariadb_lab
from tests.real.rotation_secrets import aws, make_secret, secret_document

pytestmark = [pytest.mark.mariadb]
__all__ = ["aws", "mariadb_lab"]  # fixtures, imported for pytest to find


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> Any:
    module = load_function_module("rotate_db_secret")
    module._function.cache_clear()
    yield module
    module._function.cache_clear()


class AllLogs:
    """Everything logged from :meth:`start` on: the Powertools logger's own output (at DEBUG),
    every record the std logging root sees (at DEBUG, so botocore's wire logs would show up if
    let through) and whatever reached this process's stdout and stderr. The test's own set-up
    (its CreateSecret carries the first password) happens before ``start``."""

    def __init__(self, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> None:
        self.caplog, self.capfd, self.stream = caplog, capfd, io.StringIO()

    def start(self) -> None:
        self.caplog.clear()
        self.capfd.readouterr()
        self.stream.seek(0)
        self.stream.truncate()

    def text(self) -> str:
        records = [f"{r.getMessage()} {r.__dict__}" for r in self.caplog.records]
        captured = self.capfd.readouterr()
        return "\n".join([self.stream.getvalue(), self.caplog.text, *records, captured.out, captured.err])


@pytest.fixture
def all_logs(caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> Iterator[AllLogs]:
    caplog.set_level(logging.DEBUG)
    logs = AllLogs(caplog, capfd)
    handler = powertools_logger.registered_handler
    previous_stream = handler.setStream(logs.stream)  # type: ignore[attr-defined]
    previous_level = powertools_logger.log_level
    powertools_logger.setLevel(logging.DEBUG)
    yield logs
    powertools_logger.setLevel(previous_level)
    handler.setStream(previous_stream)  # type: ignore[attr-defined]


@pytest.mark.usefixtures("aws")
def test_a_full_rotation_and_roll_out_never_logs_a_password(
    monkeypatch: pytest.MonkeyPatch,
    mariadb_lab: MariaDBLab,
    app: Any,
    all_logs: AllLogs,
    tmp_path: Any,
) -> None:
    account = mariadb_lab.create_user("logs")
    arn = make_secret(secret_document(mariadb_lab, account, "short"))
    runner = RolloutRunner(
        tmp_path,
        secret_source=lambda: raw_value(arn),
        accepts=login_works,  # slurmdbd answers when MariaDB takes its credentials
    )
    nodes = [runner.add(name, account.user, account.password) for name in ("ctl1", "ctl2")]
    found = ClusterControllers(
        cluster="lab",
        cluster_arn="arn:aws:sagemaker:us-east-1:123456789012:cluster/abc123",
        cluster_id="abc123",
        cluster_status="InService",
        controllers=tuple(Controller(**node.as_json()) for node in nodes),  # type: ignore[arg-type]
    )
    fake_commands(app, monkeypatch, runner, lambda cluster, group: found)
    for name, setting in {
        **lease_places(),  # every roll-out holds the cluster's lease
        "DB_SECRET_ARN": arn,
        "DB_HOST": HOST,
        "DB_PORT": str(PORT),
        "ROTATION_STRATEGY": "alternating",
        "ROLLOUT_DOCUMENT": DOCUMENT,
        "SLURMDBD_OWNER": CURRENT_USER,
        "SLURMDBD_VERIFY_SECONDS": "10",
        "CLUSTER_NAME": "lab",
        "CONTROLLER_GROUP": "controller-machine",
    }.items():
        monkeypatch.setenv(name, setting)
    context = LambdaContext(
        "RotateDbSecretFunction", "arn:aws:lambda:us-east-1:123456789012:function:x", 256, 900
    )
    returned: list[Any] = []
    service = RotationService(monkeypatch, lambda event: returned.append(app.lambda_handler(event, context)))
    all_logs.start()

    service.rotate(arn)
    service.rotate(arn)
    returned.append(app.lambda_handler({"action": "rollout"}, context))

    current = value(arn)
    assert current["username"] == account.user  # alternated twice: back to the base user
    finish = [r for r in returned if r.get("step") == "finishSecret"]
    assert len(finish) == 2
    assert all(r["rollout"]["complete"] for r in finish)
    assert returned[-1]["rollout"]["complete"]
    for node in nodes:
        assert node.credentials() == {"storageuser": current["username"], "storagepass": current["password"]}
        assert login_works(node.running()["storageuser"], node.running()["storagepass"])

    client = boto3.client("secretsmanager")
    passwords = {account.password, current["password"]}
    for version in client.list_secret_version_ids(SecretId=arn)["Versions"]:
        passwords.add(
            json.loads(client.get_secret_value(SecretId=arn, VersionId=version["VersionId"])["SecretString"])[
                "password"
            ]
        )
    assert len(passwords) == 3
    everything = "\n".join([all_logs.text(), json.dumps(returned), json.dumps(service.events)])
    assert "rotation step done" in everything
    assert "slurmdbd answers with the rotated credentials" in everything
    for password in passwords:
        assert password not in everything
