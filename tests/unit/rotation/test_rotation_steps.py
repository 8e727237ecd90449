"""The rotation contract's checks and the steps that touch only Secrets Manager (moto).

setSecret and testSecret against a real server are in tests/real/test_rotation_mariadb.py.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha.rotation.contract import RotationEvent, Step, Strategy
from hyperpod_ha.rotation.database import Session
from hyperpod_ha.rotation.errors import RotationError, RotationRequestInvalid
from hyperpod_ha.rotation.grants import Account
from hyperpod_ha.rotation.secret import Endpoint, SecretFormatError
from hyperpod_ha.rotation.settings import RotationSettings
from hyperpod_ha.rotation.steps import Rotation
from tests.fakes.rotation_service import RotationService, raw_value, stages, value

SHORT = {"username": "admin", "password": "Old-Password-1"}
FULL = {
    "engine": "mariadb",
    "host": "db.example.internal",
    "port": 3306,
    "username": "admin",
    "password": "Old-Password-1",
    "dbname": "slurm_acct_db",
    "unknownKey": {"kept": True},
}


def no_database(endpoint: Endpoint, username: str, password: str) -> Session:
    raise AssertionError("this step must not touch the database")


class LoggedIn(Session):
    """A session for any credentials: the single-user testSecret passes (it only logs in)."""

    def __init__(self, username: str) -> None:
        super().__init__(None, username)

    def ping(self) -> None:
        return None

    def current_account(self) -> Account:
        return Account(self.username, "%")

    def close(self) -> None:
        return None


def logs_in(endpoint: Endpoint, username: str, password: str) -> Session:
    return LoggedIn(username)


def passed_its_test(arn: str, token: str) -> None:
    """testSecret passed on the token's version (single user: a login is the whole test)."""
    single = Rotation(boto3.client("secretsmanager"), logs_in, RotationSettings(Strategy.SINGLE, "db", 3306))
    assert single.run(event(Step.TEST, arn, token)).outcome == "pending_logs_in"


@pytest.fixture
def aws() -> Iterator[None]:
    with mock_aws():
        yield


@pytest.fixture
def service(aws: None, monkeypatch: pytest.MonkeyPatch) -> RotationService:
    return RotationService(monkeypatch, handler=None)


def make_secret(document: dict[str, Any], name: str = "slurmdbd", spaced: bool = False) -> str:
    text = json.dumps(document) if spaced else json.dumps(document, separators=(",", ":"))
    return str(boto3.client("secretsmanager").create_secret(Name=name, SecretString=text)["ARN"])


def rotation(strategy: Strategy = Strategy.ALTERNATING) -> Rotation:
    return Rotation(
        boto3.client("secretsmanager"), no_database, RotationSettings(strategy, "db.from.env", 3306)
    )


def event(step: Step, secret: str, token: str) -> RotationEvent:
    return RotationEvent(step, secret, token)


OWN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:slurmdbd-AbCdEf"


def test_events_are_parsed_and_the_secret_is_the_stacks_own() -> None:
    raw = {"Step": "setSecret", "SecretId": OWN, "ClientRequestToken": "t-1"}
    assert RotationEvent.parse(raw, OWN) == RotationEvent(Step.SET, OWN, "t-1")
    assert RotationEvent.parse({"Step": "testSecret", "ClientRequestToken": "t"}, OWN).secret_id == OWN
    # The secret's name (moto's rotation sends it) names this secret in this account and region.
    assert RotationEvent.parse({**raw, "SecretId": "slurmdbd"}, OWN).secret_id == "slurmdbd"
    # Without DB_SECRET_ARN (development only) there is nothing to compare with.
    assert RotationEvent.parse({**raw, "SecretId": "from-event"}).secret_id == "from-event"


@pytest.mark.parametrize(
    "secret_id",
    [
        OWN.replace("123456789012", "210987654321"),  # another account's secret of that name
        OWN.replace("slurmdbd", "other"),
        OWN + "x",
        OWN.removesuffix("-AbCdEf") + "-AbCdEfGh",
        OWN + "-XyZ789",  # a secret named "slurmdbd-AbCdEf": another one
        "slurmdbd-AbCdEf",  # that other secret's name
        "other",
        "x" * 20_000,
    ],
)
def test_a_secret_other_than_the_stacks_is_refused(secret_id: str) -> None:
    raw = {"Step": "createSecret", "SecretId": secret_id, "ClientRequestToken": "t-1"}
    with pytest.raises(RotationRequestInvalid, match="not this stack's database secret") as refused:
        RotationEvent.parse(raw, OWN)
    assert secret_id not in str(refused.value)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({"Step": "dropSecret", "SecretId": "s", "ClientRequestToken": "t"}, "Step must be one of"),
        ({"SecretId": "s", "ClientRequestToken": "t"}, "Step must be one of"),
        ({"Step": "createSecret", "ClientRequestToken": "t"}, "no SecretId"),
        ({"Step": "createSecret", "SecretId": "s"}, "no ClientRequestToken"),
    ],
)
def test_malformed_events_are_refused(raw: dict[str, Any], reason: str) -> None:
    with pytest.raises(RotationRequestInvalid, match=reason):
        RotationEvent.parse(raw)


def test_an_unknown_strategy_is_a_configuration_error() -> None:
    assert Strategy.parse(" Single ") is Strategy.SINGLE
    with pytest.raises(RotationRequestInvalid, match="ROTATION_STRATEGY"):
        Strategy.parse("dual")


def test_a_secret_without_rotation_enabled_is_refused(aws: None) -> None:
    arn = make_secret(SHORT)
    with pytest.raises(RotationRequestInvalid, match="rotation is not enabled"):
        rotation().run(event(Step.CREATE, arn, "00000000-0000-0000-0000-000000000000"))


def test_a_token_that_is_no_version_is_refused(service: RotationService) -> None:
    arn = make_secret(SHORT)
    service.start(arn)
    with pytest.raises(RotationRequestInvalid, match="has no stage for rotation"):
        rotation().run(event(Step.CREATE, arn, "11111111-1111-1111-1111-111111111111"))


@pytest.mark.parametrize("strategy", list(Strategy))
def test_create_stores_a_compact_pending_version_with_every_key(
    service: RotationService, strategy: Strategy
) -> None:
    arn = make_secret(FULL, spaced=True)
    token = service.start(arn)

    result = rotation(strategy).run(event(Step.CREATE, arn, token))

    assert result.outcome == "pending_created"
    pending = value(arn, "AWSPENDING")
    text = raw_value(arn, "AWSPENDING")
    assert ": " not in text
    assert f'"password":"{pending["password"]}"' in text
    assert {k: v for k, v in pending.items() if k not in ("username", "password")} == {
        k: v for k, v in FULL.items() if k not in ("username", "password")
    }
    assert list(pending) == list(FULL)
    assert pending["username"] == ("admin_clone" if strategy is Strategy.ALTERNATING else "admin")
    assert pending["password"] != FULL["password"]
    assert len(pending["password"]) == 32
    assert set(pending["password"]) <= set(string.ascii_letters + string.digits + "-_.+:,@^")
    assert stages(arn)[token] == ["AWSPENDING"]
    assert value(arn) == FULL, "AWSCURRENT is untouched"


def test_create_on_a_deeply_nested_secret_is_a_typed_refusal(service: RotationService) -> None:
    arn = boto3.client("secretsmanager").create_secret(Name="deep", SecretString="[" * 60_000)["ARN"]
    token = service.start(arn)
    with pytest.raises(SecretFormatError, match="nests deeper"):
        rotation().run(event(Step.CREATE, arn, token))


def test_create_twice_keeps_the_first_password(service: RotationService) -> None:
    arn = make_secret(SHORT)
    token = service.start(arn)
    rotation().run(event(Step.CREATE, arn, token))
    first = value(arn, "AWSPENDING")
    assert rotation().run(event(Step.CREATE, arn, token)).outcome == "pending_exists"
    assert value(arn, "AWSPENDING") == first


def test_finish_moves_current_and_takes_pending_off(service: RotationService) -> None:
    arn = make_secret(SHORT)
    before = next(v for v, labels in stages(arn).items() if "AWSCURRENT" in labels)
    token = service.start(arn)
    rotation().run(event(Step.CREATE, arn, token))
    passed_its_test(arn, token)

    assert rotation().run(event(Step.FINISH, arn, token)).outcome == "current_moved"
    assert stages(arn) == {before: ["AWSPREVIOUS"], token: ["AWSCURRENT", "HYPERPOD_HA_TESTED"]}
    # Every later step with this token is done already.
    for step in Step:
        assert rotation().run(event(step, arn, token)).outcome == "already_current"
    # And the next rotation can start (moto refuses while AWSPENDING sits on AWSCURRENT).
    assert service.start(arn) != token


def test_finish_refuses_a_version_whose_test_never_passed_and_moves_nothing(
    service: RotationService,
) -> None:
    # A direct invoke of finishSecret right after createSecret: setSecret and testSecret never ran.
    arn = make_secret(SHORT)
    token = service.start(arn)
    rotation().run(event(Step.CREATE, arn, token))
    before = stages(arn)
    with pytest.raises(RotationRequestInvalid, match="has not passed testSecret"):
        rotation().run(event(Step.FINISH, arn, token))
    assert stages(arn) == before
    assert value(arn) == SHORT, "AWSCURRENT is untouched"


def test_the_tested_mark_follows_the_last_version_whose_test_passed(service: RotationService) -> None:
    arn = make_secret(SHORT)
    first = service.start(arn)
    rotation(Strategy.SINGLE).run(event(Step.CREATE, arn, first))
    passed_its_test(arn, first)
    passed_its_test(arn, first)  # a retried testSecret: the mark stays where it is
    assert stages(arn)[first] == ["AWSPENDING", "HYPERPOD_HA_TESTED"]
    rotation().run(event(Step.FINISH, arn, first))
    second = service.start(arn)
    rotation(Strategy.SINGLE).run(event(Step.CREATE, arn, second))
    with pytest.raises(RotationRequestInvalid, match="has not passed testSecret"):
        rotation().run(event(Step.FINISH, arn, second))  # the first version's mark does not count
    passed_its_test(arn, second)
    assert [v for v, labels in stages(arn).items() if "HYPERPOD_HA_TESTED" in labels] == [second]
    assert rotation().run(event(Step.FINISH, arn, second)).outcome == "current_moved"


def test_a_finish_cut_between_its_two_label_moves_is_completed(service: RotationService) -> None:
    arn = make_secret(SHORT)
    token = service.start(arn)
    rotation().run(event(Step.CREATE, arn, token))
    client = boto3.client("secretsmanager")
    current = next(v for v, labels in stages(arn).items() if "AWSCURRENT" in labels)
    client.update_secret_version_stage(
        SecretId=arn, VersionStage="AWSCURRENT", MoveToVersionId=token, RemoveFromVersionId=current
    )
    assert stages(arn)[token] == ["AWSCURRENT", "AWSPENDING"]
    assert rotation().run(event(Step.FINISH, arn, token)).outcome == "already_current"
    assert stages(arn)[token] == ["AWSCURRENT"]


def test_a_version_that_is_neither_pending_nor_current_is_refused(service: RotationService) -> None:
    arn = make_secret(SHORT)
    old = next(v for v, labels in stages(arn).items() if "AWSCURRENT" in labels)
    token = service.start(arn)
    rotation().run(event(Step.CREATE, arn, token))
    passed_its_test(arn, token)
    rotation().run(event(Step.FINISH, arn, token))
    with pytest.raises(RotationRequestInvalid, match="is not AWSPENDING"):
        rotation().run(event(Step.SET, arn, old))


def _put_pending(arn: str, token: str, document: dict[str, Any]) -> None:
    boto3.client("secretsmanager").put_secret_value(
        SecretId=arn,
        ClientRequestToken=token,
        SecretString=json.dumps(document),
        VersionStages=["AWSPENDING"],
    )


@pytest.mark.parametrize(
    ("strategy", "pending", "reason"),
    [
        (Strategy.ALTERNATING, {**FULL, "host": "other.example"}, "another database"),
        (Strategy.SINGLE, {**FULL, "port": 3307}, "another database"),
        (Strategy.SINGLE, {**FULL, "username": "admin_clone"}, "names another user"),
        (Strategy.ALTERNATING, {**FULL, "username": "root"}, "expected admin_clone"),
    ],
)
def test_set_refuses_a_pending_version_that_does_not_fit_before_touching_the_database(
    service: RotationService, strategy: Strategy, pending: dict[str, Any], reason: str
) -> None:
    arn = make_secret(FULL)
    token = service.start(arn)
    _put_pending(arn, token, pending)
    with pytest.raises(RotationError, match=reason) as caught:
        rotation(strategy).run(event(Step.SET, arn, token))
    assert "Old-Password-1" not in caught.value.reason
