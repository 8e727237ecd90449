"""RotateDbSecretFunction's handler on moto with its roll-out run on controllers faked on this
machine (tests/fakes/rollout_nodes.py): the rig of the rotation's function tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha.controllers.models import ClusterControllers, Controller
from hyperpod_ha_dev.embedded import opscenter
from hyperpod_ha_dev.embedded.functions import LambdaContext
from hyperpod_ha_dev.embedded.patching import applied
from tests.conftest import CURRENT_USER, load_function_module
from tests.fakes.rollout_nodes import DOCUMENT, RolloutRunner
from tests.fakes.rotation_function import Discover, fake_commands

OLD = {"username": "admin", "password": "Old-Password-1"}
NEW = {"username": "admin_clone", "password": "New-Password-2"}
CONTEXT = LambdaContext(
    "RotateDbSecretFunction", "arn:aws:lambda:us-east-1:123456789012:function:x", 256, 900
)


@dataclass
class Rig:
    module: Any
    arn: str
    runner: RolloutRunner
    table: str  # the state table: the cluster's lease
    machine: str  # the verification state machine
    discovery_calls: list[tuple[str, str]] = field(default_factory=list)
    discover: Discover = field(default=lambda cluster, group: pytest.fail("discovery is not faked"))

    def lambda_handler(self, event: dict[str, Any], context: Any) -> Any:
        return self.module.lambda_handler(event, context)

    def discover_controllers(self, cluster: str, group: str) -> ClusterControllers:
        return self.discover(cluster, group)  # what discovered() set, when the function asks


def lease_places() -> dict[str, str]:
    """On moto: the state table (where a roll-out holds the cluster's lease) and a verification
    state machine (the run after a roll-out that triggers joined), as the function's variables."""
    table = boto3.client("dynamodb").create_table(
        TableName="state",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )["TableDescription"]["TableName"]
    # moto records executions without running them: the run after a roll-out is only started.
    machine = boto3.client("stepfunctions").create_state_machine(
        name="verification",
        definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}),
        roleArn="arn:aws:iam::123456789012:role/sfn",
    )["stateMachineArn"]
    return {"STATE_TABLE": str(table), "STATE_MACHINE_ARN": str(machine)}


@contextmanager
def rotation_rig(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Rig]:
    """RotateDbSecretFunction's handler on moto (a secret, the state table, a verification state
    machine), its commands run on controllers faked on this machine."""
    # moto has no OpsCenter: the embedded stack's double takes the roll-out's incidents.
    with mock_aws(), applied(opscenter.patches()):
        module = load_function_module("rotate_db_secret")
        module._function.cache_clear()
        arn = boto3.client("secretsmanager").create_secret(
            Name="slurmdbd", SecretString=json.dumps(OLD, separators=(",", ":"))
        )["ARN"]
        valid = {tuple(OLD.values()), tuple(NEW.values())}
        runner = RolloutRunner(
            tmp_path,
            secret_source=lambda: boto3.client("secretsmanager").get_secret_value(SecretId=arn)[
                "SecretString"
            ],
            accepts=lambda user, password: (user, password) in valid,
        )
        places = lease_places()
        table, machine = places["STATE_TABLE"], places["STATE_MACHINE_ARN"]
        for name, setting in {
            **places,
            "DB_SECRET_ARN": arn,
            "DB_HOST": "db.example.internal",
            "ROLLOUT_DOCUMENT": DOCUMENT,
            "SLURMDBD_OWNER": CURRENT_USER,
            "SLURMDBD_VERIFY_SECONDS": "2",
            "CLUSTER_NAME": "lab",
            "CONTROLLER_GROUP": "controller-machine",
        }.items():
            monkeypatch.setenv(name, setting)
        rig = Rig(module, arn, runner, table, machine)
        fake_commands(module, monkeypatch, runner, rig.discover_controllers)
        yield rig
        module._function.cache_clear()


def discovered(app: Rig, controllers: list[dict[str, Any]]) -> None:
    found = ClusterControllers(
        cluster="lab",
        cluster_arn="arn:aws:sagemaker:us-east-1:123456789012:cluster/abc123",
        cluster_id="abc123",
        cluster_status="InService",
        controllers=tuple(Controller(**c) for c in controllers),
    )
    asked: list[tuple[str, str]] = []

    def discover(cluster: str, group: str) -> ClusterControllers:
        asked.append((cluster, group))
        return found

    app.discover = discover
    app.discovery_calls = asked
