"""What the tests of the rotation against the real MariaDB share: moto, the secret, a
rotation driven in this process, and reading logins and grants back from the server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha.rotation import grants
from hyperpod_ha.rotation.contract import RotationEvent, Strategy
from hyperpod_ha.rotation.database import Session, TlsPolicy, pymysql_connector
from hyperpod_ha.rotation.secret import Endpoint
from hyperpod_ha.rotation.settings import RotationSettings
from hyperpod_ha.rotation.steps import Rotation
from tests.real.mariadb import HOST, PORT, Account, MariaDBLab, login_works, own_grants

STRATEGIES = [Strategy.ALTERNATING, Strategy.SINGLE]
SHAPES = ["short", "full"]


@pytest.fixture
def aws() -> Iterator[None]:
    with mock_aws():
        yield


def secret_document(lab: MariaDBLab, account: Account, shape: str) -> dict[str, Any]:
    if shape == "short":  # the HyperPod sample's secret: host and port come from DB_HOST/DB_PORT
        return {"username": account.user, "password": account.password}
    return {
        "engine": "mariadb",
        "host": HOST,
        "port": PORT,
        "username": account.user,
        "password": account.password,
        "dbname": lab.database,
        "note": "a key the rotation does not know",
    }


def make_secret(document: dict[str, Any], *, spaced: bool = False) -> str:
    text = json.dumps(document) if spaced else json.dumps(document, separators=(",", ":"))
    return str(boto3.client("secretsmanager").create_secret(Name="slurmdbd", SecretString=text)["ARN"])


Connector = Callable[[Endpoint, str, str], Session]


def rotation_handler(
    strategy: Strategy, connector: Connector | None = None, master_secret_arn: str | None = None
) -> Callable[[dict[str, Any]], Any]:
    rotation = Rotation(
        boto3.client("secretsmanager"),
        connector or pymysql_connector(TlsPolicy(None)),
        RotationSettings(strategy, default_host=HOST, default_port=PORT, master_secret_arn=master_secret_arn),
    )
    return lambda event: rotation.run(RotationEvent.parse(event)).to_json()


def logs_in(document: dict[str, Any]) -> bool:
    return login_works(document["username"], document["password"])


def grant_keys(document: dict[str, Any]) -> set[tuple[object, ...]]:
    account = grants.Account(document["username"], "%")
    return grants.grant_keys(
        grants.grants_of(account, own_grants(document["username"], document["password"]))
    )


def pending_of(arn: str, token: str) -> dict[str, Any] | None:
    try:
        text = boto3.client("secretsmanager").get_secret_value(
            SecretId=arn, VersionId=token, VersionStage="AWSPENDING"
        )["SecretString"]
    except Exception:  # no value yet (before createSecret) or no longer pending
        return None
    loaded: dict[str, Any] = json.loads(text)
    return loaded
