"""TLS choices and error reasons of the MariaDB adapter (no server needed)."""

from __future__ import annotations

import logging
import ssl
from pathlib import Path
from typing import Any

import pymysql
import pytest

from hyperpod_ha.rotation import database
from hyperpod_ha.rotation.database import (
    DatabaseUnreachable,
    LoginFailed,
    PrivilegeMissing,
    Session,
    StatementFailed,
    TlsConfigurationError,
    TlsPolicy,
)
from hyperpod_ha.rotation.secret import Endpoint

RDS = Endpoint("slurm-db.abcdefgh.us-east-1.rds.amazonaws.com", 3306)
LOCAL = Endpoint("127.0.0.1", 3306)


def test_a_configured_ca_bundle_is_verified_with_the_host_name(tmp_path: Path) -> None:
    bundle = tmp_path / "global-bundle.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    arguments = TlsPolicy.from_setting(str(bundle)).connect_arguments(RDS)
    assert arguments == {"ssl_ca": str(bundle), "ssl_verify_cert": True, "ssl_verify_identity": True}


def test_a_missing_ca_bundle_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(TlsConfigurationError, match="DB_CA_BUNDLE"):
        TlsPolicy.from_setting(str(tmp_path / "absent.pem"))


def test_a_bundle_shipped_in_the_layer_is_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = tmp_path / "rds-global-bundle.pem"
    shipped.write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.setattr(database, "SHIPPED_RDS_CA_BUNDLE", shipped)
    assert TlsPolicy.from_setting(None) == TlsPolicy(str(shipped))


def test_without_a_bundle_a_remote_server_is_verified_against_the_system_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(database, "SHIPPED_RDS_CA_BUNDLE", tmp_path / "none.pem")
    arguments = TlsPolicy.from_setting(None).connect_arguments(RDS)
    context = arguments["ssl"]
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert context.check_hostname


def test_only_a_local_server_goes_without_tls_and_it_says_so_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(database, "SHIPPED_RDS_CA_BUNDLE", tmp_path / "none.pem")
    database._warn_tls_off.cache_clear()
    caplog.set_level(logging.WARNING)
    policy = TlsPolicy.from_setting(None)
    assert policy.connect_arguments(LOCAL) == {"ssl_disabled": True}
    assert policy.connect_arguments(LOCAL) == {"ssl_disabled": True}
    warnings = [r for r in caplog.records if "TLS is off" in r.getMessage()]
    assert len(warnings) == 1


class FailingCursor:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def __enter__(self) -> FailingCursor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, sql: str, params: Any) -> None:
        raise self.error


class FailingConnection:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def cursor(self) -> FailingCursor:
        return FailingCursor(self.error)

    def close(self) -> None:
        raise pymysql.err.InterfaceError(0, "already closed")


HASH = "*EDBC947285651AA5E2A9EBA5AA8C9476871E5372"


def test_a_statement_carrying_a_password_never_quotes_the_server() -> None:
    echo = pymysql.err.ProgrammingError(1064, "You have an error in your SQL syntax near 'Secret-Password-9'")
    opened = Session(FailingConnection(echo), "admin")
    with pytest.raises(StatementFailed) as caught:
        opened.set_own_password("Secret-Password-9")
    assert caught.value.reason == "SET PASSWORD: MariaDB error 1064"
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__
    opened.close()  # a connection the server dropped closes quietly


def test_other_statements_quote_the_server_without_password_hashes() -> None:
    denied = pymysql.err.OperationalError(1044, f"Access denied for user 'admin'@'%' to database 'x' {HASH}")
    with pytest.raises(PrivilegeMissing) as caught:
        Session(FailingConnection(denied), "admin").execute("copy a grant", "GRANT SELECT ON x.* TO y")
    assert HASH not in caught.value.reason
    assert "<hash>" in caught.value.reason
    assert caught.value.reason.startswith("copy a grant: MariaDB error 1044 (Access denied")


def test_access_denied_on_a_statement_is_a_missing_privilege_not_a_failed_login() -> None:
    denied = pymysql.err.OperationalError(1045, "Access denied for user 'admin'@'%' (using password: YES)")
    with pytest.raises(PrivilegeMissing):
        Session(FailingConnection(denied), "admin").execute("copy a grant", "GRANT CREATE USER ON *.* TO y")


@pytest.mark.parametrize(
    ("code", "expected"),
    [(1045, LoginFailed), (1698, LoginFailed), (2003, DatabaseUnreachable), (1129, StatementFailed)],
)
def test_login_errors_are_classified(
    monkeypatch: pytest.MonkeyPatch, code: int, expected: type[Exception]
) -> None:
    def refuse(**kwargs: Any) -> None:
        raise pymysql.err.OperationalError(
            code, f"refused (password {kwargs['password']!r} not echoed by servers)"
        )

    monkeypatch.setattr(pymysql, "connect", refuse)
    connect = database.pymysql_connector(TlsPolicy(None))
    with pytest.raises(expected) as caught:
        connect(Endpoint("127.0.0.1", 3306), "admin", "Login-Password-7")
    assert caught.value.__cause__ is None
    assert str(code) in str(caught.value)
    # Servers do not echo passwords; should one ever, the reason still would not carry it.
    assert "Login-Password-7" not in str(caught.value)
