"""MariaDB logins, password changes and grant copies, with PyMySQL.

Passwords only ever travel as query parameters (PyMySQL quotes them) or in the login
handshake; they are never formatted into SQL text, log lines or error reasons. MariaDB's own
error messages can quote the statement (``... near '<text>'``), so a failed statement that
carried a password reports its error number only.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pymysql

from hyperpod_ha.errors import ConfigurationError, HyperpodHaError
from hyperpod_ha.observability import logger
from hyperpod_ha.rotation.grants import Account
from hyperpod_ha.rotation.secret import Endpoint

CONNECT_TIMEOUT_SECONDS = 5
QUERY_TIMEOUT_SECONDS = 30
# Every session: bounded waits, each statement its own transaction, utf8mb4.
_SESSION_OPTIONS: dict[str, Any] = {
    "connect_timeout": CONNECT_TIMEOUT_SECONDS,
    "read_timeout": QUERY_TIMEOUT_SECONDS,
    "write_timeout": QUERY_TIMEOUT_SECONDS,
    "autocommit": True,
    "charset": "utf8mb4",
}
# Where a layer build may place Amazon RDS's CA bundle (global-bundle.pem); used when
# DB_CA_BUNDLE is not set.
SHIPPED_RDS_CA_BUNDLE = Path(__file__).with_name("rds-global-bundle.pem")

_ACCESS_DENIED = 1045
# At login MariaDB answers an unknown user sometimes with 1698 instead of 1045 (it pretends
# the account exists with some authentication plugin, so users cannot be enumerated).
_LOGIN_REFUSED = {_ACCESS_DENIED, 1698}
_UNREACHABLE = {2002, 2003, 2005, 2006, 2013, 2055}
# Past the login, access denied (1045, 1698) is a privilege the user lacks.
_PRIVILEGE_MISSING = {_ACCESS_DENIED, 1044, 1142, 1143, 1227, 1410, 1698}
_PASSWORD_HASH = re.compile(r"\*[0-9A-Fa-f]{40}")


class DatabaseError(HyperpodHaError):
    """A database operation failed. ``reason`` is safe to log (no password, no hash)."""


class LoginFailed(DatabaseError):
    """The server refused the credentials (error 1045)."""


class DatabaseUnreachable(DatabaseError):
    """No connection to the server (network, TLS, server down)."""


class PrivilegeMissing(DatabaseError):
    """The logged-in user may not do this (CREATE USER, GRANT OPTION, ADMIN OPTION, ...)."""


class StatementFailed(DatabaseError):
    """Any other error from the server."""


class TlsConfigurationError(ConfigurationError, ValueError):
    """DB_CA_BUNDLE names a file that does not exist."""


@dataclass(frozen=True)
class TlsPolicy:
    """How to protect the connection: a CA bundle (verified, with host name), the system's
    trust store, or nothing (only ever for a database on this machine)."""

    ca_bundle: str | None

    @classmethod
    def from_setting(cls, ca_bundle: str | None) -> TlsPolicy:
        if ca_bundle:
            if not Path(ca_bundle).is_file():
                raise TlsConfigurationError(f"DB_CA_BUNDLE {ca_bundle!r} is not a readable file")
            return cls(ca_bundle)
        if SHIPPED_RDS_CA_BUNDLE.is_file():
            return cls(str(SHIPPED_RDS_CA_BUNDLE))
        return cls(None)

    def connect_arguments(self, endpoint: Endpoint) -> dict[str, Any]:
        if self.ca_bundle:
            return {"ssl_ca": self.ca_bundle, "ssl_verify_cert": True, "ssl_verify_identity": True}
        if endpoint.is_local:
            _warn_tls_off(endpoint.host)
            return {"ssl_disabled": True}
        # A remote server without a configured bundle: verify against the system's trust
        # store. RDS certificates are not in it, so RDS needs DB_CA_BUNDLE (the error says so).
        return {"ssl": ssl.create_default_context()}


@cache
def _warn_tls_off(host: str) -> None:
    # Once per container and host: a rotation opens several connections.
    logger.warning(
        "TLS is off for the database connection: no CA bundle and the host is local", extra={"db_host": host}
    )


def _errno(error: pymysql.err.MySQLError) -> int:
    code = error.args[0] if error.args else 0
    return code if isinstance(code, int) else 0


def _message(error: pymysql.err.MySQLError, secrets: tuple[str, ...]) -> str:
    text = str(error.args[1]) if len(error.args) > 1 else ""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "<redacted>")
    return _PASSWORD_HASH.sub("<hash>", text)


def _failure(
    operation: str,
    error: pymysql.err.MySQLError,
    *,
    quote_server: bool,
    login: bool = False,
    secrets: tuple[str, ...] = (),
) -> DatabaseError:
    code = _errno(error)
    detail = f"{operation}: MariaDB error {code}"
    if quote_server:
        detail += f" ({_message(error, secrets)})"
    if login and code in _LOGIN_REFUSED:
        return LoginFailed(detail)
    if code in _PRIVILEGE_MISSING:
        return PrivilegeMissing(detail)
    if code in _UNREACHABLE:
        return DatabaseUnreachable(detail)
    return StatementFailed(detail)


class Session:
    """One logged-in connection. Every statement goes through :meth:`_run`."""

    def __init__(self, connection: Any, username: str) -> None:
        self._connection = connection
        self.username = username

    def close(self) -> None:
        # A connection the server already dropped has nothing left to release.
        with suppress(pymysql.err.Error):
            self._connection.close()

    def _run(
        self, operation: str, sql: str, params: tuple[Any, ...] | None = None, *, secret: bool = False
    ) -> list[Any]:
        try:
            with self._connection.cursor() as cursor:
                cursor.execute(sql, params)
                return list(cursor.fetchall())
        except pymysql.err.MySQLError as error:
            # No chaining: the original exception's text may quote the statement.
            raise _failure(operation, error, quote_server=not secret) from None

    def current_account(self) -> Account:
        rows = self._run("read CURRENT_USER()", "SELECT CURRENT_USER()")
        return Account.parse(str(rows[0][0]))

    def own_grant_lines(self) -> list[str]:
        # FOR CURRENT_USER(): without it MariaDB adds the active role's own grants.
        return [str(row[0]) for row in self._run("SHOW GRANTS", "SHOW GRANTS FOR CURRENT_USER()")]

    def ping(self) -> None:
        self._run("SELECT 1", "SELECT 1")

    def set_own_password(self, password: str) -> None:
        # SET PASSWORD for one's own account needs no privilege at all (ALTER USER would need
        # CREATE USER), which is what a single-user rotation of a plain user relies on.
        self._run("SET PASSWORD", "SET PASSWORD = PASSWORD(%s)", (password,), secret=True)

    def create_or_reset_user(self, account: Account, password: str) -> None:
        """The account exists afterwards and has this password (twice-safe)."""
        self._run(
            f"CREATE USER IF NOT EXISTS {account}",
            "CREATE USER IF NOT EXISTS %s@%s IDENTIFIED BY %s",
            (account.user, account.host, password),
            secret=True,
        )
        # For an account that already existed (the previous rotation's user), CREATE ... IF
        # NOT EXISTS left its password alone.
        self._run(
            f"ALTER USER {account}",
            "ALTER USER %s@%s IDENTIFIED BY %s",
            (account.user, account.host, password),
            secret=True,
        )

    def execute(self, label: str, statement: str) -> None:
        """A statement without secrets (GRANT/REVOKE built from SHOW GRANTS lines)."""
        self._run(label, statement)


# Opens a logged-in session: (endpoint, user name, password) -> Session. Tests and the
# real-MariaDB tier pass their own to count logins or inject failures.
Connector = Callable[[Endpoint, str, str], Session]


def pymysql_connector(tls: TlsPolicy) -> Connector:
    def connect(endpoint: Endpoint, username: str, password: str) -> Session:
        try:
            connection = pymysql.connect(
                host=endpoint.host,
                port=endpoint.port,
                user=username,
                password=password,
                **_SESSION_OPTIONS,
                **tls.connect_arguments(endpoint),
            )
        except pymysql.err.MySQLError as error:
            raise _failure(
                f"login as {username} to {endpoint.host}:{endpoint.port}",
                error,
                quote_server=True,
                login=True,
                secrets=(password,),
            ) from None
        return Session(connection, username)

    return connect


@contextmanager
def session(connector: Connector, endpoint: Endpoint, username: str, password: str) -> Iterator[Session]:
    opened = connector(endpoint, username, password)
    try:
        yield opened
    finally:
        opened.close()


def can_login(connector: Connector, endpoint: Endpoint, username: str, password: str) -> bool:
    """True if the credentials log in; False if the server refuses them; raises if unreachable."""
    try:
        with session(connector, endpoint, username, password) as opened:
            opened.ping()
    except LoginFailed:
        return False
    return True
