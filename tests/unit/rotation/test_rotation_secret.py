"""The secret's JSON: both shapes, compact writing, unknown keys kept, errors that never quote it."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.rotation.secret import (
    EXCLUDED_CHARACTERS,
    MAX_USERNAME_LENGTH,
    RDS_REFUSED,
    SAFE_PUNCTUATION,
    DbSecret,
    Endpoint,
    SecretFormatError,
    UnsafePassword,
    alternate_username,
    check_password_alphabet,
    compact_json,
    parse_secret,
)

SAMPLE_SHORT = '{"username":"admin","password":"Old-Password-1"}'
RDS_FULL = json.dumps(
    {
        "engine": "mariadb",
        "host": "db.example.internal",
        "port": 3306,
        "username": "admin",
        "password": "Old-Password-1",
        "dbname": "slurm_acct_db",
        "dbClusterIdentifier": "kept-because-unknown",
    }
)


def test_the_hyperpod_short_shape_takes_host_and_port_from_configuration() -> None:
    secret = parse_secret(SAMPLE_SHORT)
    assert (secret.username, secret.password) == ("admin", "Old-Password-1")
    assert secret.endpoint("rds.example.internal", 3306) == Endpoint("rds.example.internal", 3306)


def test_the_full_rds_shape_names_its_own_endpoint() -> None:
    secret = parse_secret(RDS_FULL)
    assert secret.endpoint("ignored.example", 1) == Endpoint("db.example.internal", 3306)


def test_a_port_given_as_text_is_read_as_a_number() -> None:
    secret = parse_secret('{"username":"u","password":"p","host":"h","port":"3307"}')
    assert secret.endpoint(None, 3306) == Endpoint("h", 3307)


def test_no_host_anywhere_is_a_clear_error() -> None:
    with pytest.raises(SecretFormatError, match="DB_HOST"):
        parse_secret(SAMPLE_SHORT).endpoint(None, 3306)


def test_new_credentials_keep_every_other_key_and_their_order() -> None:
    rotated = parse_secret(RDS_FULL).with_credentials("admin_clone", "New-Password-2")
    document = json.loads(rotated.to_secret_string())
    assert list(document) == list(json.loads(RDS_FULL))
    assert document["dbClusterIdentifier"] == "kept-because-unknown"
    assert (document["username"], document["password"]) == ("admin_clone", "New-Password-2")


def test_a_secret_written_with_spaces_comes_back_compact_for_the_lifecycle_grep() -> None:
    spaced = '{"username": "admin", "password": "Old-Password-1", "extra": [1, 2]}'
    written = parse_secret(spaced).with_credentials("admin", "New-Password-2").to_secret_string()
    assert '"password":"New-Password-2"' in written
    assert ": " not in written
    assert ", " not in written
    assert json.loads(written)["extra"] == [1, 2]


def test_compact_json_has_no_separator_spaces() -> None:
    assert compact_json({"a": 1, "b": "c d"}) == '{"a":1,"b":"c d"}'


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (None, "no SecretString"),
        ("not json at all: hunter2", "is not JSON"),
        ('["hunter2"]', "not an object"),
        ('{"username":"admin"}', "password"),
        ('{"username":"","password":"hunter2"}', "username"),
        ('{"username":"admin","password":12345}', "password"),
    ],
)
def test_malformed_secrets_are_rejected_without_quoting_them(raw: str | None, reason: str) -> None:
    with pytest.raises(SecretFormatError, match=reason) as caught:
        parse_secret(raw)
    assert "hunter2" not in str(caught.value)
    # No chained JSON error either: its text and .doc would carry the secret into a traceback.
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None or caught.value.__suppress_context__


@given(st.text())
def test_no_parse_error_ever_contains_the_text(raw: str) -> None:
    refusal: SecretFormatError | None = None
    try:
        parse_secret(raw)
    except SecretFormatError as error:
        refusal = error
    if refusal is not None and len(raw) >= 4:
        assert raw not in str(refusal)


def test_repr_never_shows_the_password() -> None:
    secret = parse_secret(RDS_FULL)
    assert "Old-Password-1" not in repr(secret)
    assert "Old-Password-1" not in str(secret)
    assert "admin" in repr(secret)


def test_alternating_users_flip_between_the_base_name_and_its_clone() -> None:
    assert alternate_username("admin") == "admin_clone"
    assert alternate_username("admin_clone") == "admin"
    assert alternate_username(alternate_username("slurm_admin")) == "slurm_admin"
    assert alternate_username("_clone") == "_clone_clone"


def test_a_user_name_too_long_for_its_clone_is_refused() -> None:
    with pytest.raises(SecretFormatError, match="too long"):
        alternate_username("u" * (MAX_USERNAME_LENGTH - 5))
    assert alternate_username("u" * (MAX_USERNAME_LENGTH - 6)).endswith("_clone")


@pytest.mark.parametrize("character", list("\"'\\#$ `&;|<>(){}*?!~=%[]/@"))
def test_characters_that_break_slurmdbd_conf_or_a_shell_are_excluded(character: str) -> None:
    assert character in EXCLUDED_CHARACTERS or character == " "
    with pytest.raises(UnsafePassword):
        check_password_alphabet("Abcdefgh12345678" + character)


def test_what_rds_refuses_in_a_master_password_is_never_generated() -> None:
    # RDS: "any printable ASCII character except '/', '"', '@', or a space".
    for character in RDS_REFUSED:
        assert character in EXCLUDED_CHARACTERS or character == " "
        assert character not in SAFE_PUNCTUATION
        with pytest.raises(UnsafePassword):
            check_password_alphabet("Abcdefgh12345678" + character)


def test_the_excluded_and_safe_sets_split_all_punctuation() -> None:
    assert set(EXCLUDED_CHARACTERS) | set(SAFE_PUNCTUATION) == set(string.punctuation)
    assert not set(EXCLUDED_CHARACTERS) & set(SAFE_PUNCTUATION)


def test_a_safe_password_passes_and_a_short_one_does_not() -> None:
    check_password_alphabet("Ab3-_.+:,^" + "x" * 22)
    with pytest.raises(UnsafePassword, match="shorter"):
        check_password_alphabet("Ab3-x")


def test_db_secret_equality_is_by_document() -> None:
    assert DbSecret({"username": "a", "password": "b"}) == parse_secret('{"username":"a","password":"b"}')
