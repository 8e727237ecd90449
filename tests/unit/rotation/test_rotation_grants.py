"""SHOW GRANTS lines taken apart and re-aimed at the twin user (lines as MariaDB 10.11 prints them)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.rotation.grants import (
    Account,
    GrantKind,
    GrantParseError,
    grant_keys,
    grants_of,
    parse_grant_line,
    quote_identifier,
    tokenize,
)

HASH = "*EDBC947285651AA5E2A9EBA5AA8C9476871E5372"
SOURCE = Account("admin", "%")
TWIN = Account("admin_clone", "%")

# What `SHOW GRANTS FOR CURRENT_USER()` printed on this machine's MariaDB 10.11 for a user
# with a role, a global privilege with a resource limit, a wildcard database grant with
# GRANT OPTION and column privileges; plus the role's own lines, which plain SHOW GRANTS adds.
ADMIN_LINES = [
    "GRANT `acct_role` TO `admin`@`%`",
    f"GRANT CREATE USER ON *.* TO `admin`@`%` IDENTIFIED BY PASSWORD '{HASH}' WITH MAX_QUERIES_PER_HOUR 1000",
    "GRANT ALL PRIVILEGES ON `%`.* TO `admin`@`%` WITH GRANT OPTION",
    "GRANT SELECT (`b c`, `a`), INSERT (`a`) ON `acct`.`t` TO `admin`@`%`",
    "GRANT USAGE ON *.* TO `acct_role`",
    "GRANT SELECT ON `acct`.* TO `acct_role`",
    "SET DEFAULT ROLE `acct_role` FOR `admin`@`%`",
]


def test_only_the_accounts_own_lines_are_copied() -> None:
    grants = grants_of(SOURCE, ADMIN_LINES)
    assert [g.kind for g in grants] == [
        GrantKind.ROLE,
        GrantKind.PRIVILEGES,
        GrantKind.PRIVILEGES,
        GrantKind.PRIVILEGES,
        GrantKind.DEFAULT_ROLE,
    ]


def test_lines_are_re_aimed_at_the_twin_without_the_password_hash() -> None:
    statements = [g.statement_for(TWIN) for g in grants_of(SOURCE, ADMIN_LINES)]
    assert statements == [
        "GRANT `acct_role` TO `admin_clone`@`%`",
        "GRANT CREATE USER ON *.* TO `admin_clone`@`%` WITH MAX_QUERIES_PER_HOUR 1000",
        "GRANT ALL PRIVILEGES ON `%`.* TO `admin_clone`@`%` WITH GRANT OPTION",
        "GRANT SELECT (`b c`, `a`), INSERT (`a`) ON `acct`.`t` TO `admin_clone`@`%`",
        "SET DEFAULT ROLE `acct_role` FOR `admin_clone`@`%`",
    ]
    assert all(HASH not in s and "IDENTIFIED" not in s for s in statements)


def test_identified_via_with_require_keeps_the_options_after_it() -> None:
    line = (
        "GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` IDENTIFIED VIA unix_socket "
        "OR mysql_native_password USING 'invalid' REQUIRE SSL WITH GRANT OPTION"
    )
    grant = parse_grant_line(line).grant
    assert (
        grant.statement_for(TWIN)
        == "GRANT ALL PRIVILEGES ON *.* TO `admin_clone`@`%` REQUIRE SSL WITH GRANT OPTION"
    )


def test_quoted_names_may_hold_keywords_quotes_and_backticks() -> None:
    line = "GRANT SELECT ON `db TO x`.`t``q` TO `we``ird@user`@`10.0.%` WITH GRANT OPTION"
    parsed = parse_grant_line(line)
    assert (parsed.grantee_user, parsed.grantee_host) == ("we`ird@user", "10.0.%")
    assert (
        parsed.grant.statement_for(TWIN)
        == "GRANT SELECT ON `db TO x`.`t``q` TO `admin_clone`@`%` WITH GRANT OPTION"
    )


def test_single_quoted_grantees_of_older_servers_are_understood() -> None:
    parsed = parse_grant_line("GRANT USAGE ON *.* TO 'admin'@'%' IDENTIFIED BY PASSWORD '" + HASH + "'")
    assert (parsed.grantee_user, parsed.grantee_host) == ("admin", "%")
    assert parsed.grant.statement_for(TWIN) == "GRANT USAGE ON *.* TO `admin_clone`@`%`"


def test_proxy_grants_are_recognised() -> None:
    grant = parse_grant_line("GRANT PROXY ON ''@'%' TO `admin`@`%` WITH GRANT OPTION").grant
    assert grant.kind is GrantKind.PROXY
    assert grant.statement_for(TWIN) == "GRANT PROXY ON ''@'%' TO `admin_clone`@`%` WITH GRANT OPTION"


def test_comparison_ignores_column_and_privilege_order_but_not_grant_option() -> None:
    first = parse_grant_line("GRANT SELECT (`b c`, `a`), INSERT (`a`) ON `acct`.`t` TO `admin`@`%`").grant
    second = parse_grant_line(
        "GRANT INSERT (`a`), SELECT (`a`, `b c`) ON `acct`.`t` TO `admin_clone`@`%`"
    ).grant
    assert first.key == second.key
    with_option = parse_grant_line("GRANT SELECT ON `acct`.* TO `a`@`%` WITH GRANT OPTION").grant
    without = parse_grant_line("GRANT SELECT ON `acct`.* TO `a`@`%`").grant
    assert with_option.key != without.key


def test_the_same_grants_for_two_accounts_compare_equal() -> None:
    twin_lines = [line.replace("`admin`@`%`", "`admin_clone`@`%`") for line in ADMIN_LINES]
    twin_lines[1] = twin_lines[1].replace(HASH, "*0000000000000000000000000000000000000000")
    assert grant_keys(grants_of(SOURCE, ADMIN_LINES)) == grant_keys(grants_of(TWIN, twin_lines))


@pytest.mark.parametrize(
    "line",
    [
        "REVOKE SELECT ON *.* FROM `a`@`%`",
        "GRANT SELECT ON *.*",
        "GRANT SELECT ON `db`.* TO `a`@",
        "GRANT SELECT ON `unterminated.* TO `a`@`%`",
        "SET DEFAULT ROLE `r`",
    ],
)
def test_lines_it_cannot_read_are_refused_without_quoting_them(line: str) -> None:
    with pytest.raises(GrantParseError) as caught:
        parse_grant_line(line)
    assert line not in str(caught.value)


def test_account_parses_current_user_output() -> None:
    assert Account.parse("slurm@db@10.0.0.%") == Account("slurm@db", "10.0.0.%")
    assert Account("a`b", "%").sql() == "`a``b`@`%`"
    with pytest.raises(GrantParseError):
        Account.parse("no-at-sign")


names = st.text(alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), min_size=1)


@given(user=names, host=names, database=names)
def test_any_quoted_names_survive_a_round_trip(user: str, host: str, database: str) -> None:
    account = Account(user, host)
    line = f"GRANT SELECT, INSERT ON {quote_identifier(database)}.* TO {account.sql()} WITH GRANT OPTION"
    parsed = parse_grant_line(line)
    assert (parsed.grantee_user, parsed.grantee_host) == (user, host)
    assert parsed.grant.statement_for(account) == line


@given(st.text())
def test_the_tokenizer_either_reads_a_line_or_refuses_it(line: str) -> None:
    try:
        tokens = tokenize(line)
    except GrantParseError:
        return
    # Tokens cover the line exactly; only whitespace lies between them.
    cursor = 0
    for token in tokens:
        assert line[token.start : token.end] == token.text
        assert line[cursor : token.start].strip() == ""
        cursor = token.end
    assert line[cursor:].strip() == ""
