"""The database secret's JSON: reading it, changing the credentials, writing it back.

Two shapes are in use. The HyperPod multi-head sample stack stores only ``username`` and
``password`` (host and port then come from the function's configuration); the RDS rotation
templates expect ``engine``, ``host``, ``port``, ``username``, ``password``, ``dbname``.
Every key the secret has is kept, known or not, and the JSON is written compact because the
HyperPod lifecycle script reads the password with ``grep -o '"password":"[^"]*"'``.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hyperpod_ha.errors import InputRejected
from hyperpod_ha.json_input import load_json

AWSCURRENT = "AWSCURRENT"
AWSPENDING = "AWSPENDING"
AWSPREVIOUS = "AWSPREVIOUS"
# This rotation's own stage: on the version whose testSecret passed (one version at a time).
# finishSecret promotes only a version that carries it, so a direct invoke cannot skip the test.
TESTED = "HYPERPOD_HA_TESTED"

CLONE_SUFFIX = "_clone"
# MariaDB 10.6 and later accept 128 characters, older servers 80: the lower bound keeps a
# twin valid on every server this may run against.
MAX_USERNAME_LENGTH = 80

PASSWORD_LENGTH = 32
# The only punctuation a new password may contain: none of these means anything to
# slurmdbd.conf's parser (comments, quoting, key=value), to a shell (quoting, expansion,
# globbing, redirection, job control), to sed replacements or to the lifecycle's grep, and
# RDS accepts each in a master password (it refuses "/", '"', "@" and space).
SAFE_PUNCTUATION = "-_.+:,^"
# What RDS refuses in a master password: a later reset through the RDS API would fail.
RDS_REFUSED = '/"@ '
EXCLUDED_CHARACTERS = "".join(c for c in string.punctuation if c not in SAFE_PUNCTUATION)
_ALLOWED_PASSWORD_CHARACTERS = frozenset(string.ascii_letters + string.digits + SAFE_PUNCTUATION)


class SecretFormatError(InputRejected):
    """The secret's value is not the JSON this rotation understands. The reason never quotes it."""


class UnsafePassword(InputRejected):
    """A generated password holds a character slurmdbd.conf or a shell would misread."""


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int

    @property
    def is_local(self) -> bool:
        return self.host in ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True)
class DbSecret:
    """One version of the secret. ``repr`` shows the user name only, never the password."""

    document: Mapping[str, Any] = field(repr=False)

    @property
    def username(self) -> str:
        return str(self.document["username"])

    @property
    def password(self) -> str:
        return str(self.document["password"])

    def endpoint(self, default_host: str | None, default_port: int) -> Endpoint:
        """Where the database is: the secret's own ``host``/``port`` when it has them."""
        host = self.document.get("host") or default_host
        if not host:
            raise SecretFormatError("the secret has no 'host' and DB_HOST is not set")
        raw_port = self.document.get("port", default_port)
        try:
            port = int(raw_port)
        except (TypeError, ValueError):
            raise SecretFormatError("the secret's 'port' is not a number") from None
        return Endpoint(host=str(host), port=port)

    def with_credentials(self, username: str, password: str) -> DbSecret:
        """The same secret with other credentials; every other key is kept as it was."""
        document = dict(self.document)
        document["username"] = username
        document["password"] = password
        return DbSecret(document)

    def to_secret_string(self) -> str:
        return compact_json(self.document)

    def __repr__(self) -> str:
        return f"DbSecret(username={self.username!r}, keys={sorted(self.document)!r})"


def compact_json(document: Mapping[str, Any]) -> str:
    """JSON without spaces after ``:`` and ``,`` (what the lifecycle script's grep needs)."""
    return json.dumps(document, separators=(",", ":"))


def parse_secret(secret_string: str | None) -> DbSecret:
    if secret_string is None:
        raise SecretFormatError("the secret version has no SecretString")
    # load_json drops the decoder's message and attributes: they can hold part of the text.
    document = load_json(secret_string, SecretFormatError, what="the secret")
    if not isinstance(document, dict):
        raise SecretFormatError("the secret's JSON is not an object")
    for key in ("username", "password"):
        value = document.get(key)
        if not isinstance(value, str) or not value:
            raise SecretFormatError(f"the secret has no non-empty string {key!r}")
    return DbSecret(document)


def alternate_username(username: str) -> str:
    """The other user of the alternating pair: ``admin`` <-> ``admin_clone``."""
    if username.endswith(CLONE_SUFFIX) and len(username) > len(CLONE_SUFFIX):
        return username[: -len(CLONE_SUFFIX)]
    other = username + CLONE_SUFFIX
    if len(other) > MAX_USERNAME_LENGTH:
        raise SecretFormatError(
            f"user name {username!r} is too long for a {CLONE_SUFFIX!r} twin "
            f"(MariaDB allows {MAX_USERNAME_LENGTH} characters)"
        )
    return other


def check_password_alphabet(password: str) -> None:
    """Refuse a password that slurmdbd.conf, a shell or the lifecycle's grep would misread."""
    if len(password) < 16:
        raise UnsafePassword("the generated password is shorter than 16 characters")
    if not set(password) <= _ALLOWED_PASSWORD_CHARACTERS:
        raise UnsafePassword("the generated password holds characters outside the safe alphabet")
