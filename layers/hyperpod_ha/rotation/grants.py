"""Reading MariaDB's ``SHOW GRANTS`` lines and aiming them at another account.

The alternating strategy gives ``<user>_clone`` exactly the grants of ``<user>``. MariaDB has
no "copy grants" statement, so the lines ``SHOW GRANTS FOR CURRENT_USER()`` prints are taken
apart with a small tokenizer (quoted identifiers can hold any text, including ``TO``) and put
back together with the other account as grantee. Care points:

- ``IDENTIFIED BY PASSWORD '<hash>'`` (or ``IDENTIFIED VIA ...``) rides on the first global
  line: it is dropped, never re-applied, never logged (a hash is as good as a password for
  offline guessing).
- Lines granted to a role (shown when a role is active) are not the user's own: skipped.
- Role grants (``GRANT `r` TO ...``), proxy grants and ``SET DEFAULT ROLE`` are copied too.
- Comparing two users' grants ignores column order inside ``SELECT (`a`, `b`)`` and the order
  of privileges, which MariaDB does not keep stable across accounts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from hyperpod_ha.errors import InputRejected

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<ident>`(?:[^`]|``)*`)
  | (?P<string>'(?:[^'\\]|\\.|'')*')
  | (?P<dstring>"(?:[^"\\]|\\.|"")*")
  | (?P<punct>[(),@])
  | (?P<word>[^\s`'"(),@]+)
    """,
    re.VERBOSE | re.DOTALL,
)


class GrantParseError(InputRejected):
    """A ``SHOW GRANTS`` line this module does not understand. The reason never quotes the line
    (the line may carry a password hash)."""


@dataclass(frozen=True)
class Token:
    kind: str  # ident | string | dstring | punct | word
    text: str
    start: int
    end: int

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.text.upper() in words

    @property
    def value(self) -> str:
        """The identifier or string without its quotes."""
        if self.kind == "ident":
            return self.text[1:-1].replace("``", "`")
        if self.kind in ("string", "dstring"):
            quote = self.text[0]
            inner = self.text[1:-1].replace(quote * 2, quote)
            return re.sub(r"\\(.)", r"\1", inner)
        return self.text


def tokenize(line: str) -> list[Token]:
    tokens: list[Token] = []
    position = 0
    while position < len(line):
        match = _TOKEN.match(line, position)
        if match is None:
            raise GrantParseError(f"unbalanced quotes at character {position} of a SHOW GRANTS line")
        kind = match.lastgroup or "word"
        if kind != "space":
            tokens.append(Token(kind, match.group(), match.start(), match.end()))
        position = match.end()
    return tokens


def quote_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True)
class Account:
    user: str
    host: str

    def sql(self) -> str:
        return f"{quote_identifier(self.user)}@{quote_identifier(self.host)}"

    def __str__(self) -> str:
        return f"{self.user}@{self.host}"

    @classmethod
    def parse(cls, text: str) -> Account:
        """``CURRENT_USER()``'s ``user@host`` (user names may contain ``@``; host names do not)."""
        user, separator, host = text.rpartition("@")
        if not separator or not user:
            raise GrantParseError("CURRENT_USER() did not return user@host")
        return cls(user, host)


class GrantKind(Enum):
    PRIVILEGES = "privileges"  # GRANT <privileges> ON <object> TO ...
    PROXY = "proxy"  # GRANT PROXY ON <account> TO ...
    ROLE = "role"  # GRANT <role> TO ...
    DEFAULT_ROLE = "default_role"  # SET DEFAULT ROLE <role> FOR ...


@dataclass(frozen=True)
class Grant:
    """One ``SHOW GRANTS`` line without its grantee and without any IDENTIFIED clause."""

    kind: GrantKind
    head: str  # everything before TO / FOR, e.g. "GRANT SELECT ON `db`.*"
    tail: str  # REQUIRE ... / WITH ... options after the grantee, IDENTIFIED removed
    key: tuple[object, ...]  # order-insensitive identity, for comparing two accounts' grants

    def statement_for(self, account: Account) -> str:
        joiner = "FOR" if self.kind is GrantKind.DEFAULT_ROLE else "TO"
        statement = f"{self.head} {joiner} {account.sql()}"
        return f"{statement} {self.tail}" if self.tail else statement


def _canonical_words(text: str) -> str:
    return " ".join(t.text.upper() if t.kind == "word" else t.text for t in tokenize(text))


def _grantee(tokens: list[Token], index: int) -> tuple[str, str | None, int]:
    """The grantee starting at ``tokens[index]``: (user or role, host or None, next index)."""
    if index >= len(tokens) or tokens[index].kind not in ("ident", "string", "dstring", "word"):
        raise GrantParseError("a SHOW GRANTS line has no grantee after TO/FOR")
    name = tokens[index].value
    if index + 1 < len(tokens) and tokens[index + 1].text == "@":
        if index + 2 >= len(tokens):
            raise GrantParseError("a SHOW GRANTS line has a grantee without host after '@'")
        return name, tokens[index + 2].value, index + 3
    return name, None, index + 1


def _without_identified(line: str, tokens: list[Token]) -> str:
    """The options after the grantee, with ``IDENTIFIED ...`` up to REQUIRE/WITH removed."""
    kept: list[str] = []
    skipping = False
    cursor: int | None = None
    for token in tokens:
        if token.is_word("IDENTIFIED"):
            skipping = True
        elif skipping and token.is_word("REQUIRE", "WITH"):
            skipping = False
        if skipping:
            cursor = None
            continue
        if cursor is not None and cursor < token.start:
            kept.append(line[cursor : token.start])
        kept.append(token.text)
        cursor = token.end
    return "".join(kept).strip()


def _privilege_key(head_tokens: list[Token]) -> tuple[object, ...]:
    """Order-insensitive form of ``GRANT <privileges> ON <object>``."""
    on = next((i for i, t in enumerate(head_tokens) if t.is_word("ON")), None)
    if on is None:
        raise GrantParseError("a privilege grant has no ON clause")
    items: list[tuple[str, tuple[str, ...]]] = []
    words: list[str] = []
    columns: list[str] = []
    depth = 0
    for token in head_tokens[1:on]:
        if token.text == "(":
            depth += 1
        elif token.text == ")":
            depth -= 1
        elif token.text == "," and depth == 0:
            items.append((" ".join(words), tuple(sorted(columns))))
            words, columns = [], []
        elif depth > 0:
            if token.text != ",":
                columns.append(token.value)
        else:
            words.append(token.text.upper())
    items.append((" ".join(words), tuple(sorted(columns))))
    on_object = " ".join(t.text.upper() if t.kind == "word" else t.text for t in head_tokens[on + 1 :])
    return (GrantKind.PRIVILEGES.value, tuple(sorted(items)), on_object)


@dataclass(frozen=True)
class ParsedLine:
    grant: Grant
    grantee_user: str
    grantee_host: str | None


def parse_grant_line(line: str) -> ParsedLine:
    tokens = tokenize(line)
    if len(tokens) >= 4 and [t.text.upper() for t in tokens[:3]] == ["SET", "DEFAULT", "ROLE"]:
        joiner = next((i for i, t in enumerate(tokens) if t.is_word("FOR")), None)
        if joiner is None:
            raise GrantParseError("SET DEFAULT ROLE line without FOR")
        user, host, after = _grantee(tokens, joiner + 1)
        role = " ".join(t.value for t in tokens[3:joiner])
        head = line[: tokens[joiner].start].strip()
        grant = Grant(GrantKind.DEFAULT_ROLE, head, "", (GrantKind.DEFAULT_ROLE.value, role))
        return ParsedLine(grant, user, host)
    if not tokens or not tokens[0].is_word("GRANT"):
        raise GrantParseError("a SHOW GRANTS line does not start with GRANT or SET DEFAULT ROLE")
    joiner = next((i for i, t in enumerate(tokens) if t.is_word("TO")), None)
    if joiner is None:
        raise GrantParseError("a GRANT line has no TO")
    user, host, after = _grantee(tokens, joiner + 1)
    head_tokens = tokens[:joiner]
    head = line[: tokens[joiner].start].strip()
    tail_tokens = tokens[after:]
    tail = _without_identified(line, tail_tokens) if tail_tokens else ""
    tail_key = _canonical_words(tail) if tail else ""
    if len(head_tokens) >= 2 and head_tokens[1].is_word("PROXY"):
        proxied = " ".join(t.value for t in head_tokens[3:])
        key: tuple[object, ...] = (GrantKind.PROXY.value, proxied, tail_key)
        kind = GrantKind.PROXY
    elif any(t.is_word("ON") for t in head_tokens):
        key = (*_privilege_key(head_tokens), tail_key)
        kind = GrantKind.PRIVILEGES
    else:
        role = " ".join(t.value for t in head_tokens[1:])
        key = (GrantKind.ROLE.value, role, tail_key)
        kind = GrantKind.ROLE
    return ParsedLine(Grant(kind, head, tail, key), user, host)


# A bare "GRANT USAGE ON *.*" grants nothing: every account has one until it holds a global
# privilege (then that line carries the account's options instead).
_NOTHING = (GrantKind.PRIVILEGES.value, (("USAGE", ()),), "*.*", "")


def grants_of(account: Account, lines: list[str]) -> list[Grant]:
    """The grants ``SHOW GRANTS`` lists for ``account`` itself (role privileges left out)."""
    own: list[Grant] = []
    for line in lines:
        parsed = parse_grant_line(line)
        if (parsed.grantee_user, parsed.grantee_host) != (account.user, account.host):
            continue
        if parsed.grant.key != _NOTHING:
            own.append(parsed.grant)
    return own


def grant_keys(grants: list[Grant]) -> set[tuple[object, ...]]:
    return {grant.key for grant in grants}
