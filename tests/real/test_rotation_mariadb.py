"""The rotation against the real MariaDB server, Secrets Manager by moto.

Every rotation runs through moto's RotateSecret with the Lambda invocations routed to the
rotation code (see tests/unit/rotation/rotation_service.py). Users, roles and the database
are throwaway objects of this module (tests/real/mariadb.py).
"""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha.cluster import ClusterControllers, Controller
from hyperpod_ha.observability import logger as powertools_logger
from hyperpod_ha.rotation import grants
from hyperpod_ha.rotation.database import Session, TlsPolicy, pymysql_connector
from hyperpod_ha.rotation.secret import Endpoint
from hyperpod_ha.rotation.steps import Rotation, RotationError, RotationEvent, RotationSettings, Strategy
from hyperpod_ha_dev.embedded.functions import LambdaContext
from tests.conftest import CURRENT_USER, load_function_module
from tests.real.mariadb import HOST, PORT, Account, MariaDBLab, login_works, mariadb_lab, own_grants
from tests.unit.rotation.node_fakes import DOCUMENT, FakeNodeRunner
from tests.unit.rotation.rotation_service import STEPS, RotationService, raw_value, stages, value

pytestmark = [pytest.mark.mariadb]
__all__ = ["mariadb_lab"]  # the module-scoped fixture, imported for pytest to find

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


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_three_rotations_in_a_row(
    aws: None, monkeypatch: pytest.MonkeyPatch, mariadb_lab: MariaDBLab, strategy: Strategy, shape: str
) -> None:
    account = mariadb_lab.create_user(f"{strategy.value[:3]}{shape}")
    original = secret_document(mariadb_lab, account, shape)
    arn = make_secret(original)
    original_grants = grant_keys(original)
    service = RotationService(monkeypatch, rotation_handler(strategy))

    users = []
    previous = original
    for _ in range(3):
        token = service.rotate(arn)
        current = value(arn)
        users.append(current["username"])
        assert stages(arn)[token] == ["AWSCURRENT"]
        assert logs_in(current)
        assert current["password"] != previous["password"]
        assert value(arn, "AWSPREVIOUS") == previous
        # Compact, every key kept.
        assert ": " not in raw_value(arn)
        assert f'"password":"{current["password"]}"' in raw_value(arn)
        assert {k: v for k, v in current.items() if k not in ("username", "password")} == {
            k: v for k, v in original.items() if k not in ("username", "password")
        }
        assert grant_keys(current) == original_grants
        if strategy is Strategy.ALTERNATING:
            assert logs_in(previous), "the previous user keeps working while controllers switch"
            assert grant_keys(previous) == original_grants
        else:
            assert not logs_in(previous), "a single user's old password is gone"
        previous = current

    base = account.user
    expected = [f"{base}_clone", base, f"{base}_clone"] if strategy is Strategy.ALTERNATING else [base] * 3
    assert users == expected


def test_a_twin_that_exists_with_other_grants_and_password_is_brought_in_line(
    aws: None, monkeypatch: pytest.MonkeyPatch, mariadb_lab: MariaDBLab
) -> None:
    account = mariadb_lab.create_user("stale")
    twin = f"{account.user}_clone"
    mariadb_lab.run("CREATE USER %s@'%%' IDENTIFIED BY 'Stale-Twin-Password-1'", (twin,))
    mariadb_lab.run(f"GRANT DELETE, DROP ON `{mariadb_lab.database}`.* TO %s@'%%' WITH GRANT OPTION", (twin,))
    mariadb_lab.run("GRANT PROCESS ON *.* TO %s@'%%'", (twin,))
    original = secret_document(mariadb_lab, account, "full")
    arn = make_secret(original)
    service = RotationService(monkeypatch, rotation_handler(Strategy.ALTERNATING))

    service.rotate(arn)

    current = value(arn)
    assert current["username"] == twin
    assert logs_in(current)
    assert not login_works(twin, "Stale-Twin-Password-1")
    assert grant_keys(current) == grant_keys(original)


@pytest.mark.parametrize("crash_after", STEPS)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_crash_after_any_step_converges_on_rerun(
    aws: None, monkeypatch: pytest.MonkeyPatch, mariadb_lab: MariaDBLab, strategy: Strategy, crash_after: str
) -> None:
    account = mariadb_lab.create_user(f"c{strategy.value[:3]}{STEPS.index(crash_after)}")
    original = secret_document(mariadb_lab, account, "short")
    arn = make_secret(original)
    original_grants = grant_keys(original)
    handler = rotation_handler(strategy)
    service = RotationService(monkeypatch, handler)

    def a_stored_version_logs_in(token: str) -> None:
        if logs_in(value(arn)):
            return
        # Only a single user, between setSecret and finishSecret, has its live password in
        # AWSPENDING alone: MariaDB has no dual passwords.
        pending = pending_of(arn, token)
        assert strategy is Strategy.SINGLE
        assert pending is not None
        assert logs_in(pending)

    token = service.rotate(arn, crash_after=crash_after)
    if strategy is Strategy.ALTERNATING:
        assert logs_in(value(arn)), "AWSCURRENT logs in after the crash"
    a_stored_version_logs_in(token)

    for step in STEPS:  # Secrets Manager's retry: every step again, same token
        handler({"Step": step, "SecretId": arn, "ClientRequestToken": token})
        if strategy is Strategy.ALTERNATING:
            assert logs_in(value(arn)), f"AWSCURRENT logs in after the rerun's {step}"
        a_stored_version_logs_in(token)

    assert stages(arn)[token] == ["AWSCURRENT"]
    assert logs_in(value(arn))
    assert grant_keys(value(arn)) == original_grants
    # And the next rotation still works.
    service.rotate(arn)
    assert logs_in(value(arn))
    assert grant_keys(value(arn)) == original_grants


class InjectedCrash(Exception):
    pass


def crashing_connector(after_statements: int) -> Connector:
    """The real connector, except that the n-th GRANT/REVOKE of the rotation kills it."""
    real = pymysql_connector(TlsPolicy(None))
    count = {"statements": 0}

    def connect(endpoint: Endpoint, username: str, password: str) -> Session:
        opened = real(endpoint, username, password)
        execute = opened.execute

        def flaky(label: str, statement: str) -> None:
            count["statements"] += 1
            if count["statements"] == after_statements:
                raise InjectedCrash(label)
            execute(label, statement)

        opened.execute = flaky  # type: ignore[method-assign]
        return opened

    return connect


def test_a_crash_in_the_middle_of_copying_grants_converges(
    aws: None, monkeypatch: pytest.MonkeyPatch, mariadb_lab: MariaDBLab
) -> None:
    account = mariadb_lab.create_user("midgrant")
    original = secret_document(mariadb_lab, account, "full")
    arn = make_secret(original)
    service = RotationService(monkeypatch, None)
    token = service.start(arn)
    event = {"SecretId": arn, "ClientRequestToken": token}
    crashing = rotation_handler(Strategy.ALTERNATING, crashing_connector(after_statements=3))
    crashing({**event, "Step": "createSecret"})
    with pytest.raises(InjectedCrash):
        crashing({**event, "Step": "setSecret"})
    pending = pending_of(arn, token)
    assert pending is not None
    assert logs_in(pending), "the twin exists, half-granted"
    assert grant_keys(pending) != grant_keys(original)
    assert logs_in(value(arn))

    service.handler = rotation_handler(Strategy.ALTERNATING)
    service.rerun(arn, token)

    assert stages(arn)[token] == ["AWSCURRENT"]
    assert grant_keys(value(arn)) == grant_keys(original)


def test_a_secret_written_with_spaces_is_rewritten_compact(
    aws: None, monkeypatch: pytest.MonkeyPatch, mariadb_lab: MariaDBLab
) -> None:
    account = mariadb_lab.create_user("spaced")
    arn = make_secret(secret_document(mariadb_lab, account, "short"), spaced=True)
    assert '"password": "' in raw_value(arn)
    RotationService(monkeypatch, rotation_handler(Strategy.SINGLE)).rotate(arn)
    text = raw_value(arn)
    assert ": " not in text
    assert ", " not in text
    assert f'"password":"{value(arn)["password"]}"' in text


def test_without_grant_option_alternating_stops_with_what_is_needed_and_single_works(
    aws: None, monkeypatch: pytest.MonkeyPatch, mariadb_lab: MariaDBLab
) -> None:
    account = mariadb_lab.create_user("nogrant", grant_option=False)
    original = secret_document(mariadb_lab, account, "short")
    arn = make_secret(original)
    service = RotationService(monkeypatch, None)
    token = service.start(arn)
    alternating = rotation_handler(Strategy.ALTERNATING)
    event = {"SecretId": arn, "ClientRequestToken": token}
    alternating({**event, "Step": "createSecret"})
    with pytest.raises(RotationError, match="GRANT OPTION") as caught:
        alternating({**event, "Step": "setSecret"})
    # 1044 for a database-level grant, 1045 for a global one: either way, access denied.
    assert re.search(r"copy a privileges grant to \S+_clone@%: MariaDB error 104[45] ", caught.value.reason)
    pending = pending_of(arn, token)
    assert pending is not None
    assert account.password not in caught.value.reason
    assert pending["password"] not in caught.value.reason
    assert logs_in(value(arn)), "AWSCURRENT is untouched"

    # The same user rotates fine in place.
    boto3.client("secretsmanager").update_secret_version_stage(
        SecretId=arn, VersionStage="AWSPENDING", RemoveFromVersionId=token
    )
    service.handler = rotation_handler(Strategy.SINGLE)
    service.rotate(arn)
    assert value(arn)["username"] == account.user
    assert logs_in(value(arn))


def test_with_a_master_secret_the_slurmdbd_user_needs_no_admin_rights(
    aws: None, monkeypatch: pytest.MonkeyPatch, mariadb_lab: MariaDBLab
) -> None:
    account = mariadb_lab.create_user("plain", admin_rights=False)
    master = mariadb_lab.create_master("master")
    lines = " ".join(own_grants(account.user, account.password))
    for admin_right in ("CREATE USER", "GRANT OPTION", "ADMIN OPTION"):
        assert admin_right not in lines
    original = secret_document(mariadb_lab, account, "short")
    arn = make_secret(original)
    master_arn = boto3.client("secretsmanager").create_secret(
        Name="rds-master", SecretString=json.dumps({"username": master.user, "password": master.password})
    )["ARN"]
    original_grants = grant_keys(original)

    # Without the master secret, this user cannot make its twin.
    service = RotationService(monkeypatch, None)
    token = service.start(arn)
    alone = rotation_handler(Strategy.ALTERNATING)
    event = {"SecretId": arn, "ClientRequestToken": token}
    alone({**event, "Step": "createSecret"})
    with pytest.raises(RotationError, match="CREATE USER"):
        alone({**event, "Step": "setSecret"})

    # With it, the master creates the twin, sets its password and copies the grants.
    service.handler = rotation_handler(Strategy.ALTERNATING, master_secret_arn=master_arn)
    service.rerun(arn, token)
    users = [value(arn)["username"]]
    previous = value(arn, "AWSPREVIOUS")
    for _ in range(2):
        service.rotate(arn)
        users.append(value(arn)["username"])
    current = value(arn)
    assert users == [f"{account.user}_clone", account.user, f"{account.user}_clone"]
    assert logs_in(current)
    assert logs_in(value(arn, "AWSPREVIOUS"))
    assert grant_keys(current) == original_grants == grant_keys(value(arn, "AWSPREVIOUS"))
    assert previous == original
    lines = " ".join(own_grants(current["username"], current["password"]))
    assert "CREATE USER" not in lines, "the twin gets no admin rights either"
    assert "GRANT OPTION" not in lines
    assert login_works(master.user, master.password), "the master's own password is untouched"


def test_a_password_changed_outside_the_rotation_is_reported_not_guessed(
    aws: None, monkeypatch: pytest.MonkeyPatch, mariadb_lab: MariaDBLab
) -> None:
    account = mariadb_lab.create_user("outside")
    arn = make_secret(secret_document(mariadb_lab, account, "short"))
    mariadb_lab.set_password(account.user, "Changed-Outside-1")
    service = RotationService(monkeypatch, None)
    token = service.start(arn)
    single = rotation_handler(Strategy.SINGLE)
    single({"Step": "createSecret", "SecretId": arn, "ClientRequestToken": token})
    with pytest.raises(RotationError, match="changed outside this rotation") as caught:
        single({"Step": "setSecret", "SecretId": arn, "ClientRequestToken": token})
    assert "Changed-Outside-1" not in caught.value.reason
    assert login_works(account.user, "Changed-Outside-1")


# -- the whole function: rotation, roll-out, and every log line --------------------------


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> Any:
    module = load_function_module("rotate_db_secret")
    monkeypatch.setattr(module, "_secrets", lambda: boto3.client("secretsmanager"))
    module._rotation.cache_clear()
    yield module
    module._rotation.cache_clear()


@pytest.fixture
def all_logs(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> Iterator[Callable[[], str]]:
    """Everything logged: the Powertools logger's own output (at DEBUG), every record the std
    logging root sees (at DEBUG, so botocore's wire logs would show up if let through) and
    whatever reached this process's stdout and stderr."""
    caplog.set_level(logging.DEBUG)
    handler = powertools_logger.registered_handler
    stream = io.StringIO()
    previous_stream = handler.setStream(stream)  # type: ignore[attr-defined]
    previous_level = powertools_logger.log_level
    powertools_logger.setLevel(logging.DEBUG)

    def text() -> str:
        records = [f"{r.getMessage()} {r.__dict__}" for r in caplog.records]
        captured = capfd.readouterr()
        return "\n".join([stream.getvalue(), caplog.text, *records, captured.out, captured.err])

    yield text
    powertools_logger.setLevel(previous_level)
    handler.setStream(previous_stream)  # type: ignore[attr-defined]


@pytest.mark.usefixtures("aws")
def test_a_full_rotation_and_roll_out_never_logs_a_password(
    monkeypatch: pytest.MonkeyPatch,
    mariadb_lab: MariaDBLab,
    app: Any,
    all_logs: Callable[[], str],
    tmp_path: Any,
) -> None:
    account = mariadb_lab.create_user("logs")
    arn = make_secret(secret_document(mariadb_lab, account, "short"))
    runner = FakeNodeRunner(
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
    monkeypatch.setattr(app, "discover_controllers", lambda sagemaker, cluster, group: found)
    monkeypatch.setattr(app, "_runner", lambda: runner)
    for name, setting in {
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
    everything = "\n".join([all_logs(), json.dumps(returned), json.dumps(service.events)])
    assert "rotation step done" in everything
    assert "slurmdbd answers with the rotated credentials" in everything
    for password in passwords:
        assert password not in everything
