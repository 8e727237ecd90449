"""Redaction: secret-looking keys, secrets inside text, URL credentials; linear on huge outputs."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from hyperpod_ha import redaction
from hyperpod_ha.rotation.secret import PASSWORD_LENGTH, SAFE_PUNCTUATION
from hyperpod_ha.slurm import excerpt


def test_secrets_are_redacted_by_key_and_inside_text() -> None:
    evidence = {
        "slurmdbd": {
            "StoragePass": "hunter2-db",
            "conf": "StorageUser=slurm\nStoragePass=hunter2-conf\nStorageHost=db",
            "secret": {"username": "admin", "password": "hunter2-json"},
        },
        "session": {"TokenValue": "tok-abc", "StreamUrl": "wss://ssmmessages"},
        "stdout": 'config {"password": "hunter 2 spaced", "port": 3306} and mysql://admin:hunter2-url@db:3306/x',
        "checks_passed": True,
    }
    redacted = redaction.redact(evidence)
    text = json.dumps(redacted)
    for secret in ("hunter2-db", "hunter2-conf", "hunter2-json", "tok-abc", "hunter 2 spaced", "hunter2-url"):
        assert secret not in text
    assert redacted["slurmdbd"]["StoragePass"] == "[redacted]"
    assert redacted["slurmdbd"]["secret"] == "[redacted]"
    assert "StorageUser=slurm" in redacted["slurmdbd"]["conf"]
    assert "StoragePass=[redacted]" in redacted["slurmdbd"]["conf"]
    assert '"password": "[redacted]", "port": 3306' in redacted["stdout"]
    assert "mysql://admin:[redacted]@db:3306/x" in redacted["stdout"]
    assert redacted["checks_passed"] is True
    assert redacted["session"]["StreamUrl"] == "wss://ssmmessages"


@pytest.mark.parametrize("text", ["x:" * 50_000, "c" * 200_000, "a=b " * 30_000, 'password="' * 20_000])
def test_scrubbing_huge_output_stays_linear(text: str) -> None:
    # A quadratic scan would hang here (each of these took minutes with a naive pattern).
    scrubbed = redaction.scrub_text(text)
    assert len(scrubbed) <= len(text) + len(redaction.REDACTED) * 40_000


# --- every form a password takes in node output, with the project's own alphabet -------------

PASSWORDS = st.text(
    alphabet=string.ascii_letters + string.digits + SAFE_PUNCTUATION, min_size=12, max_size=PASSWORD_LENGTH
)
# Whatever follows an unquoted value: the generator's own "," and ":" included.
AFTER = st.sampled_from(["", " tail", ",tail", ";tail", "&tail", "}", "\n", "\ttail", ":x", "'", ")"])
FORMS = [
    "StoragePass={pw}",
    "StoragePass = {pw}",
    "MYSQL_PWD={pw}",
    "export MYSQL_PWD={pw}",
    "pwd={pw}",
    "mysql -u admin -p{pw} -h db",
    "mysql --password={pw} -u admin",
    "CREATE USER 'slurm'@'%' IDENTIFIED BY '{pw}';",
    'ALTER USER slurm identified by "{pw}"',
    "alter user slurm IDENTIFIED WITH mysql_native_password BY `{pw}`",
    "GRANT ALL ON *.* TO slurm IDENTIFIED BY {pw}",
    "password\t{pw}",
    "password\t\t{pw}",
    "password=\n{pw}",
    "error: password:\r\n   {pw} next words\nfollowing line",
    "db_password: '{pw}'",
    "failed: token={pw}",
    # Issue 35, finding 3: what the redaction missed.
    "SLURM_JWT={pw}",
    "export SLURM_JWT={pw}",
    "jwt: {pw}",
    "Authorization: Bearer {pw}",
    "curl -H 'Authorization: Bearer {pw}' https://ctl1:6820/slurm/v0.0.41/ping",
    '"authorization": "Bearer {pw}"',
    "token refused: Bearer {pw}",
    "bearer={pw}",
    "SET PASSWORD FOR 'slurm'@'%' = PASSWORD('{pw}');",
    "set password = old_password('{pw}')",
    "SET PASSWORD FOR slurm@localhost = '{pw}';",
    "ALTER USER slurm IDENTIFIED VIA ed25519 USING PASSWORD('{pw}');",
    "CREATE USER s IDENTIFIED VIA mysql_native_password USING '{pw}'",
    "ALTER USER s IDENTIFIED WITH mysql_native_password AS '{pw}'",
    "GRANT ALL ON *.* TO s IDENTIFIED BY PASSWORD '{pw}'",
    "mysqladmin -u root password {pw}",
    "mysqladmin -u root -h db password '{pw}'",
    "curl -u admin:{pw} https://example.com",
    "curl --user 'admin:{pw}' https://example.com",
    "curl -uadmin:{pw} https://example.com",
    "sshpass -p {pw} ssh ctl1",
    "sshpass -v -p '{pw}' ssh ctl1",
    "redis://:{pw}@cache:6379/0",
    "StoragePass" + " " * 100 + "= {pw}",
    "password" + "\t" * 80 + "{pw}",
    "MYSQL_PWD" + " " * 65 + ": {pw}",
]


def _check(text: str, *passwords: str) -> None:
    for scrubbed in (redaction.scrub_text(text), json.dumps(redaction.redact({"stdout": [text]}))):
        for password in passwords:
            assert password not in scrubbed


@pytest.mark.parametrize("form", FORMS)
@given(password=PASSWORDS, after=AFTER)
def test_no_password_form_survives_scrubbing(form: str, password: str, after: str) -> None:
    text = "slurmdbd said: " + form.format(pw=password) + after
    assume(password not in (form.replace("{pw}", "") + after))
    _check(text, password)


@given(first=PASSWORDS, second=PASSWORDS)
def test_no_password_survives_in_json_nested_or_escaped(first: str, second: str) -> None:
    with_quote = first + '"' + second  # the text after the escaped quote must not survive either
    documents = [
        json.dumps({"password": first, "port": 3306}),
        json.dumps({"password": with_quote}),
        json.dumps({"outer": {"reports": [{"StoragePass": first}, {"MYSQL_PWD": second}]}}),
        json.dumps({"stdout": json.dumps({"password": with_quote, "user": "slurm"})}),
        json.dumps({"a": json.dumps({"b": json.dumps({"secret": with_quote})})}),
        json.dumps({"cause": f"mysql -p{first} failed; StoragePass={second}"}),
    ]
    for document in documents:
        _check("output: " + document + " end", first, second)
        _check(document, first, second)


@given(password=PASSWORDS)
def test_an_excerpt_of_node_output_holds_no_password(password: str) -> None:
    line = f"[2026-12-01T10:00:00] error: mysql -u slurm -p{password} -h db: Access denied " + "x " * 200
    assert password not in excerpt(line)
    assert password not in excerpt(f"{'x ' * 200} StoragePass={password}", tail=True)
    # Cut inside the value: its end, whose key was cut off, is dropped too.
    assert password[6:] not in excerpt(f"{'y' * 30} StoragePass={password} end", 50, tail=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("StoragePass=Ab,Cd:Ef next", "StoragePass=[redacted] next"),
        ("mysql -p secret", "mysql -p secret"),  # -p then a space: mysql prompts, no password
        ("mkdir -p /var/spool/slurm", "mkdir -p /var/spool/slurm"),
        ("password=\nAb,Cd\nkept", "password=\n[redacted]\nkept"),
        ('{"password": "ab\\"cd", "port": 1}', '{"password": "[redacted]", "port": 1}'),
        ("identified bypass", "identified bypass"),
        ('"secret_arn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf"', None),
        ('password="never closed Ab,Cd\nnext', 'password="[redacted]\nnext'),
        ("password=", "password="),
    ],
)
def test_forms_and_what_is_kept(text: str, expected: str | None) -> None:
    scrubbed = redaction.scrub_text(text)
    if expected is None:  # a secret's ARN is no secret: its account and service stay readable
        assert "arn:aws:secretsmanager:us-east-1:123456789012:secret:" in scrubbed
    else:
        assert scrubbed == expected


def test_keys_that_name_a_secret_keep_their_values() -> None:
    kept = redaction.redact({"secret_arn": "arn:x", "SecretId": "db", "token": "t", "db_password": "p"})
    assert kept == {
        "secret_arn": "arn:x",
        "SecretId": "db",
        "token": "[redacted]",
        "db_password": "[redacted]",
    }


def test_a_value_nested_beyond_the_walk_is_replaced_not_passed_on() -> None:
    deep: object = {"password": "hunter2"}
    for _ in range(5_000):
        deep = [deep]
    assert "hunter2" not in json.dumps(redaction.redact({"evidence": deep}))


@pytest.mark.parametrize(
    "text",
    [
        "password=" * 200_000,
        " -px" * 200_000,
        "a" * 1_000_000,
        '"password": "' + '\\"' * 200_000,
        "identified by " * 50_000,
        "password=\n" * 100_000,
        "password=" + " " * 500_000 + "x",
        "ab: " * 200_000,
    ],
)
def test_hostile_texts_scrub_in_one_pass(text: str) -> None:
    # Quadratic or backtracking scans would not finish here; a linear one takes well under a second.
    scrubbed = redaction.scrub_text(text)
    assert len(scrubbed) <= 4 * len(text)
    assert redaction.scrub_text(scrubbed).count(redaction.REDACTED) >= scrubbed.count(redaction.REDACTED)


def test_an_arn_names_a_secret_and_is_kept_while_a_password_after_it_is_not() -> None:
    scrub_text = redaction.scrub_text
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:slurm-accounting-AbCdEf"
    assert scrub_text(arn) == arn
    assert scrub_text(f"SecretId {arn} failed") == f"SecretId {arn} failed"
    assert scrub_text(f"{arn},password=Ab,Cd:Ef") == f"{arn},password=[redacted]"
    assert scrub_text(f"password: {arn}") == "password: [redacted]"


# --- a redacted text stays redacted (issue 35, finding 3) --------------------------------------

TEXT_PARTS = st.one_of(
    st.sampled_from(FORMS).map(lambda form: form.replace("{pw}", "Ab,Cd:Ef")),
    st.sampled_from([" ", "\n", "\t", "=", ": ", '"', "'", "\\", "[redacted]", "-p", "://", "@", "("]),
    st.text(max_size=20),
)


@given(parts=st.lists(TEXT_PARTS, max_size=10))
def test_scrubbing_a_scrubbed_text_changes_nothing(parts: list[str]) -> None:
    once = redaction.scrub_text("".join(parts))
    assert redaction.scrub_text(once) == once


@given(password=PASSWORDS, form=st.sampled_from(FORMS))
def test_a_redacted_form_stays_redacted(password: str, form: str) -> None:
    once = redaction.scrub_text(form.format(pw=password))
    assert redaction.scrub_text(once) == once
    assert redaction.REDACTED in once


def test_the_old_passwords_of_mysqladmin_and_its_new_one_are_both_removed() -> None:
    scrubbed = redaction.scrub_text("mysqladmin -u root -pOld,1 -h db password New:2 && echo done")
    assert scrubbed == "mysqladmin -u root -p[redacted] -h db password [redacted] && echo done"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc.def next", "Authorization: [redacted] next"),
        (
            "SET PASSWORD FOR 'slurm'@'%' = PASSWORD('a b');",
            "SET PASSWORD FOR 'slurm'@'%' = PASSWORD('[redacted]');",
        ),
        ('curl --user "admin:a b" https://x', 'curl --user "admin:[redacted]" https://x'),
        ("redis://:Ab,Cd@cache:6379", "redis://:[redacted]@cache:6379"),
        ("mysql -u root db", "mysql -u root db"),  # a user, no password
        ("sshpass -f /etc/pw ssh ctl1", "sshpass -f /etc/pw ssh ctl1"),  # a file's name is no secret
        ("the bearer of bad news", "the bearer [redacted] bad news"),  # the price of "Bearer <token>"
    ],
)
def test_new_forms_and_what_is_kept(text: str, expected: str) -> None:
    assert redaction.scrub_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "mysqladmin " * 100_000,
        "mysqladmin " + "x " * 200_000 + "password",
        "sshpass -x " * 100_000,
        "-u " + "a" * 255 + " " * 1 + ("-u " + "a" * 255 + " ") * 2_000,
        "set password " * 60_000,
        "Bearer " * 150_000,
        "Authorization: Bearer " * 50_000,
        "StoragePass" + " " * 500_000 + "x",
        "password(" * 100_000,
        "identified via x using " * 40_000,
    ],
)
def test_hostile_texts_of_the_new_forms_scrub_in_one_pass(text: str) -> None:
    scrubbed = redaction.scrub_text(text)
    assert len(scrubbed) <= 4 * len(text)
