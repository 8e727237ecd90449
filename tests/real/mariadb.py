"""The real MariaDB server for rotation tests: throwaway databases, users and roles.

The server is the one every development and CI machine runs at 127.0.0.1:3306 (root without
password); ``MARIADB_HOST``, ``MARIADB_PORT``, ``MARIADB_ADMIN_USER`` and
``MARIADB_ADMIN_PASSWORD`` point elsewhere. When it cannot be reached the tests are skipped
with a message saying how to run them, except under ``CI=true`` where they fail.

Everything a test module creates carries one random prefix and is dropped at teardown.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pymysql
import pytest

HOST = os.environ.get("MARIADB_HOST", "127.0.0.1")
PORT = int(os.environ.get("MARIADB_PORT", "3306"))
ADMIN_USER = os.environ.get("MARIADB_ADMIN_USER", "root")
ADMIN_PASSWORD = os.environ.get("MARIADB_ADMIN_PASSWORD", "")

HOW_TO_RUN = (
    f"needs the MariaDB server at {HOST}:{PORT} with user {ADMIN_USER!r}: start it "
    "(`service mariadb start`, or `apt-get install mariadb-server`), or point MARIADB_HOST, "
    "MARIADB_PORT, MARIADB_ADMIN_USER and MARIADB_ADMIN_PASSWORD at one, then run "
    "`pytest -m mariadb tests/real`"
)


def admin_connection() -> Any:
    return pymysql.connect(
        host=HOST, port=PORT, user=ADMIN_USER, password=ADMIN_PASSWORD, autocommit=True, connect_timeout=5
    )


def require_server() -> Any:
    try:
        return admin_connection()
    except pymysql.err.MySQLError as error:
        reason = f"MariaDB unreachable ({error.args[0] if error.args else error}); {HOW_TO_RUN}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)


def login_works(user: str, password: str) -> bool:
    try:
        connection = pymysql.connect(host=HOST, port=PORT, user=user, password=password, connect_timeout=5)
    except pymysql.err.OperationalError as error:
        if error.args and error.args[0] in (1045, 1698):  # 1698: MariaDB's answer for some unknown users
            return False
        raise
    connection.close()
    return True


def own_grants(user: str, password: str) -> list[str]:
    connection = pymysql.connect(host=HOST, port=PORT, user=user, password=password, connect_timeout=5)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW GRANTS FOR CURRENT_USER()")
            return [str(row[0]) for row in cursor.fetchall()]
    finally:
        connection.close()


@dataclass
class Account:
    user: str
    password: str = field(repr=False)


@dataclass
class MariaDBLab:
    """One module's throwaway objects: a database with a table, a role, and users."""

    admin: Any
    prefix: str
    users: list[str] = field(default_factory=list)

    @property
    def database(self) -> str:
        return f"{self.prefix}_db"

    @property
    def role(self) -> str:
        return f"{self.prefix}_role"

    def run(self, sql: str, params: tuple[Any, ...] | None = None) -> None:
        with self.admin.cursor() as cursor:
            cursor.execute(sql, params)

    def create_user(self, name: str, *, grant_option: bool = True, admin_rights: bool = True) -> Account:
        """A user shaped like the HyperPod sample's database user (all privileges on its
        databases, CREATE USER), with a role, a default role and column privileges so that
        every kind of grant line is copied. ``grant_option=False``: the lifecycle script's
        plain ``GRANT ALL`` without GRANT OPTION. ``admin_rights=False``: no CREATE USER, no
        GRANT OPTION, no ADMIN OPTION (what a master secret makes enough)."""
        user = f"{self.prefix}_{name}"
        password = "Initial-" + secrets.token_urlsafe(12).replace("-", "x")
        self.users += [user, f"{user}_clone"]
        option = " WITH GRANT OPTION" if grant_option and admin_rights else ""
        self.run("CREATE USER %s@'%%' IDENTIFIED BY %s", (user, password))
        self.run(f"GRANT ALL PRIVILEGES ON `{self.database}`.* TO %s@'%%'{option}", (user,))
        if admin_rights:
            self.run(f"GRANT CREATE USER ON *.* TO %s@'%%'{option}", (user,))
        self.run(f"GRANT SELECT (a, `b c`), INSERT (a) ON `{self.database}`.`t` TO %s@'%%'", (user,))
        self.run(f"GRANT `{self.role}` TO %s@'%%'{' WITH ADMIN OPTION' if admin_rights else ''}", (user,))
        self.run(f"SET DEFAULT ROLE `{self.role}` FOR %s@'%%'", (user,))
        return Account(user, password)

    def create_master(self, name: str) -> Account:
        """A user like the RDS master user: every privilege WITH GRANT OPTION (and the roles
        it hands out WITH ADMIN OPTION; RDS's master creates them, which gives it that)."""
        user = f"{self.prefix}_{name}"
        password = "Master-" + secrets.token_urlsafe(12).replace("-", "x")
        self.users.append(user)
        self.run("CREATE USER %s@'%%' IDENTIFIED BY %s", (user, password))
        self.run("GRANT ALL PRIVILEGES ON *.* TO %s@'%%' WITH GRANT OPTION", (user,))
        self.run(f"GRANT `{self.role}` TO %s@'%%' WITH ADMIN OPTION", (user,))
        return Account(user, password)

    def set_password(self, user: str, password: str) -> None:
        self.run("ALTER USER %s@'%%' IDENTIFIED BY %s", (user, password))

    def drop(self) -> None:
        for user in self.users:
            self.run("DROP USER IF EXISTS %s@'%%'", (user,))
        self.run(f"DROP ROLE IF EXISTS `{self.role}`")
        self.run(f"DROP DATABASE IF EXISTS `{self.database}`")


@pytest.fixture(scope="module")
def mariadb_lab() -> Iterator[MariaDBLab]:
    admin = require_server()
    lab = MariaDBLab(admin, prefix=f"hpha{secrets.token_hex(4)}")
    try:
        lab.run(f"CREATE DATABASE `{lab.database}`")
        lab.run(f"CREATE TABLE `{lab.database}`.`t` (a INT, `b c` INT)")
        lab.run(f"CREATE ROLE `{lab.role}`")
        lab.run(f"GRANT SELECT ON `{lab.database}`.* TO `{lab.role}`")
        yield lab
    finally:
        lab.drop()
        admin.close()
