"""The lab's accounting database and user on the machine's MariaDB.

HyperPod points every controller's slurmdbd at one RDS for MariaDB database; the lab uses
a database and user of its own on the local server, created at set-up and dropped at
teardown. The user is granted only the lab's database (HyperPod's lifecycle script grants
``ALL ON `%`.*``; a lab has no reason to).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pymysql

from hyperpod_lab.processes import LabError
from hyperpod_lab.topology import Topology


@dataclass(frozen=True)
class AdminConnection:
    """How the lab reaches MariaDB as an administrator (the machine's root, no password)."""

    host: str = "127.0.0.1"
    port: int = 3306
    user: str = "root"
    password: str = ""

    def connect(self) -> Any:
        try:
            return pymysql.connect(
                host=self.host,
                port=self.port,
                user=self.user,
                password=self.password,
                connect_timeout=5,
                autocommit=True,
            )
        except pymysql.MySQLError as exc:
            # The error's first argument is the server's code; its text may name the user only.
            code = exc.args[0] if exc.args else "?"
            raise LabError(
                f"cannot reach MariaDB at {self.host}:{self.port} as admin (error {code})"
            ) from None


def create(admin: AdminConnection, topology: Topology, password: str) -> None:
    """(Re)create the lab's database and its user with ``password``."""
    db_name, db_user = topology.db_name, topology.db_user
    connection = admin.connect()
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE IF NOT EXISTS `{db_name}`")
            cursor.execute(f"DROP USER IF EXISTS '{db_user}'@'localhost'")
            # slurmdbd reaches the server through its unix socket, so only @localhost.
            cursor.execute(f"CREATE USER '{db_user}'@'localhost' IDENTIFIED BY %s", (password,))
            cursor.execute(f"GRANT ALL ON `{db_name}`.* TO '{db_user}'@'localhost'")
    finally:
        connection.close()


def _lab_users(cursor: Any, topology: Topology) -> list[tuple[str, str]]:
    # The lab's user and any a rotation test added beside it (``<user>_clone``); '_' is
    # a LIKE wildcard, hence the escapes.
    pattern = topology.db_user.replace("_", "\\_") + "%"
    cursor.execute("SELECT user, host FROM mysql.user WHERE user LIKE %s", (pattern,))
    return [(str(user), str(host)) for user, host in cursor.fetchall()]


def leftovers(admin: AdminConnection, topology: Topology) -> list[str]:
    """The lab's database and users that exist now."""
    connection = admin.connect()
    try:
        with connection.cursor() as cursor:
            found = [f"user {user}@{host}" for user, host in _lab_users(cursor, topology)]
            cursor.execute(
                "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (topology.db_name,)
            )
            if cursor.fetchone() is not None:
                found.append(f"database {topology.db_name}")
            return found
    finally:
        connection.close()


def drop(admin: AdminConnection, topology: Topology) -> list[str]:
    """Drop the lab's database and users; return what was dropped. Safe to repeat."""
    found = leftovers(admin, topology)
    connection = admin.connect()
    try:
        with connection.cursor() as cursor:
            for user, host in _lab_users(cursor, topology):
                cursor.execute("DROP USER IF EXISTS %s@%s", (user, host))
            cursor.execute(f"DROP DATABASE IF EXISTS `{topology.db_name}`")
    finally:
        connection.close()
    return found
