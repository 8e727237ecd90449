"""The rotation against the real MariaDB server, Secrets Manager by moto: rotations in a row,
a stale twin, and crashes at any point that a rerun converges from.

Every rotation runs through moto's RotateSecret with the Lambda invocations routed to the
rotation code (see tests/fakes/rotation_service.py). Users, roles and the database
are throwaway objects of this module (tests/real/mariadb.py); tests/real/rotation_secrets.py
holds what the rotation tests share.
"""

from __future__ import annotations

import pytest

from hyperpod_ha.rotation.contract import Strategy
from hyperpod_ha.rotation.database import Session, TlsPolicy, pymysql_connector
from hyperpod_ha.rotation.secret import Endpoint
from tests.fakes.rotation_service import STEPS, RotationService, raw_value, stages, value
from tests.real.mariadb import MariaDBLab, login_works, mariadb_lab
from tests.real.rotation_secrets import (
    SHAPES,
    STRATEGIES,
    Connector,
    aws,
    grant_keys,
    logs_in,
    make_secret,
    pending_of,
    rotation_handler,
    secret_document,
)

pytestmark = [pytest.mark.mariadb]
__all__ = ["aws", "mariadb_lab"]  # fixtures, imported for pytest to find


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
        assert stages(arn)[token] == ["AWSCURRENT", "HYPERPOD_HA_TESTED"]  # its testSecret passed
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

    assert stages(arn)[token] == ["AWSCURRENT", "HYPERPOD_HA_TESTED"]  # its testSecret passed
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

    assert stages(arn)[token] == ["AWSCURRENT", "HYPERPOD_HA_TESTED"]  # its testSecret passed
    assert grant_keys(value(arn)) == grant_keys(original)
