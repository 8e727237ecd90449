"""The rotation against the real MariaDB server, by privileges: a secret written with spaces,
a user without GRANT OPTION, a master secret for a user without admin rights, and a password
changed outside the rotation (see tests/real/test_rotation_mariadb.py)."""

from __future__ import annotations

import json
import re

import boto3
import pytest

from hyperpod_ha.rotation.contract import Strategy
from hyperpod_ha.rotation.errors import RotationError
from tests.fakes.rotation_service import RotationService, raw_value, value
from tests.real.mariadb import MariaDBLab, login_works, mariadb_lab, own_grants
from tests.real.rotation_secrets import (
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
