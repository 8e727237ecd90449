"""Secrets out of what we write: the one redaction path of every text that leaves a function.

Keys that look like secrets, secrets written inside free text and URL credentials. The
OpsItem, SNS messages, the state table's status records, the dead-letter bodies, node text
excerpts in reports (:func:`hyperpod_ha.slurm.excerpt`) and every log line (the logger's
formatter, :mod:`hyperpod_ha.observability`) go through :func:`redact` or :func:`scrub_text`.

Inside free text (command output, error causes), these are recognised:

* ``key=value``, ``key: value``, ``key<TAB>value``, ``"key": "value"`` and the escaped form a
  JSON text inside a JSON string has (``\\"password\\": \\"...\\"``), for any key that looks like a
  secret (``StoragePass``, ``MYSQL_PWD``, ``pwd``, ``--password``, ``api_key``, ``SLURM_JWT``,
  ``bearer``, ...), with any run of blanks before and after the separator;
* ``Authorization: Bearer <token>`` (an auth scheme after a secret key: the token too) and
  ``Bearer <token>`` anywhere;
* ``mysql -p<password>`` (the password glued to ``-p``; ``-p <pw>`` makes mysql prompt);
* MariaDB's statements, any quoting, any case: ``IDENTIFIED [WITH|VIA <plugin>] BY|AS|USING
  [PASSWORD] <secret>`` (a password or its hash), ``PASSWORD('<password>')`` and
  ``OLD_PASSWORD(...)``, ``SET PASSWORD [FOR <user>] = <hash>``;
* passwords given as a command's arguments: ``mysqladmin ... password <pw>``, ``sshpass -p <pw>``,
  ``curl -u <user>:<pw>`` (also ``-U``, ``--user``, ``--proxy-user``);
* URL credentials, the user's name kept (``mysql://admin:<pw>@``, ``redis://:<pw>@``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

REDACTED: Final = "[redacted]"
_SECRET_KEY = re.compile(
    r"password|passwd|passphrase|pwd|secret|token|credential|private[_-]?key|api[_-]?key"
    r"|authorization|cookie|jwt|bearer|pass$",
    re.IGNORECASE,
)
# Names of a secret, not the secret: a secret's ARN or id is kept (logs and evidence need it).
_NAMES_A_SECRET = re.compile(r"secret[_-]?(?:arn|id|name)s?$", re.IGNORECASE)
# Deeper than this a value is not looked into, so it is not passed on either.
_MAX_DEPTH: Final = 32
_QUOTES: Final = "\"'`"
# Where a secret may start, leftmost first. At one position the SQL forms are tried before the
# key form (a keyword would otherwise be taken for a key that is no secret). A key is a whole
# word (however long: "x_StoragePass="; an option's "--" or a "..." before it), tried once at its
# start, so the search stays linear; every other run is bounded.
_MARK = re.compile(
    # The forms that start with a keyword or an option, behind one look at the first character
    # (most positions of a long text are none of them: the other alternatives are not tried).
    r"(?=[iIsSoOpPbB-])(?:"
    # IDENTIFIED [WITH|VIA <plugin>] BY|AS|USING [PASSWORD] <secret>: a password or its hash.
    r"(?P<sql>(?i:\bidentified\s{1,16}(?:(?:with|via)\s{1,16}[\w'\"`]{1,64}\s{1,16})?(?:by|as|using)\b"
    r"[ \t]{0,16}(?:password[ \t]{1,16}(?=['\"`]))?))"
    # SET PASSWORD [FOR <user>] = <hash> (or = PASSWORD('<password>'), which _value reads).
    r"|(?P<set>(?i:\bset[ \t]{1,16}password\b)[^=;\n]{0,512}=[ \t]{0,16})"
    r"|(?P<function>(?i:\b(?:old_)?password[ \t]{0,16}\()[ \t]{0,16})"
    r"|(?P<bearer>(?i:\bbearer)[ \t]{1,16}(?=\S))"
    # curl -u <user>:<password> (the user kept); a quote opened before the user closes the value.
    r"|(?P<user>(?<!\S)(?:-u|-U|--user|--proxy-user)(?:=|[ \t]{1,16})?(?P<quote>[\"']?)[^:\s\"']{1,256}:)"
    r"|(?P<sshpass>\bsshpass(?:[ \t]{1,16}-[^p\s]\S{0,64}){0,4}[ \t]{1,16}-p[ \t]{1,16})"
    r"|(?P<flag>(?<!\S)-p(?=\S)))"
    r"|(?<![\w.-])[.-]*(?P<key>[A-Za-z_][\w.-]*)"
    # Any run of blanks around the separator: each run follows one key, so the scan stays linear.
    r"(?P<sep>\\{0,3}[\"']?(?:[ \t]*[:=][ \t]*| *\t[ \t]*))"
)
# mysqladmin's "password <new>" command: the options between are scrubbed as any text (a
# "-p<old>" among them), so this form is found first, in a pass of its own that keeps them.
_MYSQLADMIN = re.compile(
    r"(?P<head>\bmysqladmin\b(?:[ \t]{1,16}(?!(?i:password)\b)\S{1,256}){0,16}?"
    r"[ \t]{1,16}(?i:password)[ \t]{1,16})"
    # One shell word: quoted parts and plain ones glued together; a quote never closed, its line.
    r"(?P<value>(?:'[^'\n]{0,1024}'|\"[^\"\n]{0,1024}\"|[^\s'\"]{1,1024}|['\"][^\n]{0,1024})+)"
)
# PASSWORD('<password>') as a value: the function's name is kept, its argument is the secret.
_FUNCTION = re.compile(r"(?i:(?:old_)?password[ \t]{0,16}\([ \t]{0,16})")
# An HTTP auth scheme: after a secret key (Authorization) its token is the secret as well.
_AUTH_SCHEME = re.compile(r"(?i:bearer|basic|digest|token|jwt|negotiate|aws4-hmac-sha256)")
_MARKERS: Final = (":", "=", "\t", "-p")
# An ARN names a resource, it holds no secret: its ``:secret:<name>`` is not a key and value. Only
# the resource's type and name are stepped over: the name stops at a blank, a quote, ``:``, ``,``,
# ``;``, ``=`` or ``&``, so a ``:password:...`` or ``password=...`` after it is still seen.
_ARN = re.compile(
    r"\barn:aws[\w-]{0,16}:[\w-]{1,64}:[\w-]{0,32}:[0-9]{12}:(?:[a-z-]{1,32}:)?[^\s\"'`\\,;=&:]{1,2048}"
)
# Words of a form that needs no separator (the SQL statements, "Bearer <token>", mysqladmin's).
_KEYWORDS: Final = ("identified", "password", "bearer")
_URL_CREDENTIALS = re.compile(
    r"(?P<scheme>\b[a-z][a-z0-9+.-]{0,31}://)(?P<user>[^:/@\s]{0,256}):(?P<password>[^@/\s]{1,1024})@"
)
# An unquoted value: blanks, then the whole whitespace-delimited token. Each is matched at one
# position and stepped over, so unbounded runs stay linear.
_TOKEN = re.compile(r"[ \t]*(?=\S)")
_TOKEN_END = re.compile(r"\S+")
_BLANKS = re.compile(r"[ \t\r\n]*")


class _Lines:
    """Where the line holding a position ends, found once per line (not once per secret)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._end = -1

    def end(self, position: int) -> int:
        if position > self._end:
            found = self._text.find("\n", position)
            self._end = len(self._text) if found < 0 else found
        return self._end


def _closing(text: str, opening_end: int, slashes: int, line_end: int) -> int | None:
    """Where a quoted value whose opening quote (after ``slashes`` backslashes) ends at
    ``opening_end`` is closed, or None. At JSON's nesting level L a quote is written after
    2^L - 1 backslashes and one escaped inside it after more: the closing quote is the one
    whose backslash run matches the opening's modulo 2 * (slashes + 1)."""
    quote = text[opening_end - 1]
    position = opening_end
    while (found := text.find(quote, position, line_end)) >= 0:
        run = 0
        while found - 1 - run >= opening_end and text[found - 1 - run] == "\\":
            run += 1
        if run % (2 * (slashes + 1)) == slashes:
            return found + 1
        position = found + 1
    return None


def _value(text: str, start: int, lines: _Lines, *, after_key: bool = False) -> tuple[int, str, int, str]:
    """(where the kept text before the value ends, opening quote, where the value ends,
    closing quote) for the secret value that follows a key, a flag or a keyword at ``start``.

    ``PASSWORD(`` before it is kept (the argument is the secret); after a key (``after_key``), an
    auth scheme's token is part of the value (``Authorization: Bearer <token>``)."""
    line_end = lines.end(start)
    if (function := _FUNCTION.match(text, start, line_end)) is not None:
        start = function.end()
    slashes = 0
    while slashes < 3 and start + slashes < line_end and text[start + slashes] == "\\":
        slashes += 1
    if start + slashes < line_end and text[start + slashes] in _QUOTES:
        opening = text[start : start + slashes + 1]
        closed = _closing(text, start + slashes + 1, slashes, line_end)
        if closed is None:  # a quote never closed (cut output): up to the line's end
            return start, opening, line_end, ""
        return start, opening, closed, opening
    if (blanks := _TOKEN.match(text, start, line_end)) is not None:
        token = _TOKEN_END.match(text, blanks.end())
        assert token is not None  # the lookahead saw a non-blank
        end = token.end()
        if after_key and _AUTH_SCHEME.fullmatch(token[0]) and (more := _TOKEN.match(text, end, line_end)):
            following = _TOKEN_END.match(text, more.end())
            assert following is not None
            end = following.end()
        return blanks.end(), "", end, ""
    # "password=" ends its line: the value is the next line that holds something, whole.
    after = _BLANKS.match(text, start)
    value_start = after.end() if after else start
    if value_start >= len(text):
        return start, "", start, ""
    return value_start, "", lines.end(value_start), ""


def _quoted_to(text: str, start: int, quote: str, lines: _Lines) -> tuple[int, str, int, str]:
    """The value from ``start`` to ``quote`` (opened before the user of ``-u "<user>:<pw>"``),
    or to its line's end when the quote is not closed."""
    line_end = lines.end(start)
    closed = text.find(quote, start, line_end)
    return start, "", (line_end if closed < 0 else closed), ""


def scrub_text(text: str) -> str:
    """Remove secrets written inside free text (see the module's docstring for the forms).

    A key that is not a secret is stepped over and the scan goes on inside its value
    (``failed: password=...``, ``"config": "token=..."``).
    """
    if not _may_hold_a_secret(text):
        return text
    if "mysqladmin" in text:  # the command's name, as a shell finds it: lower case
        text = _MYSQLADMIN.sub(lambda m: f"{m['head']}{REDACTED}", text)
    kept: list[str] = []
    position = 0
    lines = _Lines(text)
    arns = _ARN.finditer(text)
    arn = next(arns, None)
    while match := _MARK.search(text, position):
        while arn is not None and arn.end() <= match.start():
            arn = next(arns, None)
        if arn is not None and arn.start() <= match.start():  # inside an ARN: step over it whole
            kept.append(text[position : arn.end()])
            position = arn.end()
            continue
        kept.append(text[position : match.end()])
        position = match.end()
        if match["key"] is not None and not _is_secret_key(match["key"]):
            continue
        if match["quote"]:
            kept_until, opening, end, closing = _quoted_to(text, position, match["quote"], lines)
        else:
            kept_until, opening, end, closing = _value(
                text, position, lines, after_key=match["key"] is not None
            )
        if end > kept_until:
            kept += [text[position:kept_until], opening, REDACTED, closing]
            position = end
    kept.append(text[position:])
    return _URL_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@", "".join(kept))


def _may_hold_a_secret(text: str) -> bool:
    """False when none of the forms can be in ``text``: each form needs a separator, ``-p``, a
    keyword (``identified``, ``password``, ``bearer``) or a URL's ``://``. Substring tests run at C
    speed, so a large output without any (a rejected notification of 1 MiB, a log line) costs
    almost nothing."""
    if any(mark in text for mark in _MARKERS):
        return True
    lowered = text.lower()  # one copy, then substring tests: faster than a case-blind search
    return any(word in lowered for word in _KEYWORDS)


def _is_secret_key(key: str) -> bool:
    return _SECRET_KEY.search(key) is not None and _NAMES_A_SECRET.search(key) is None


def redact(value: Any, _depth: int = 0) -> Any:
    """A copy of a JSON-like value with every secret-looking key's value and inline secret removed.

    Beyond :data:`_MAX_DEPTH` levels a value is replaced whole: it is not looked into, so it is
    not passed on either (and the walk's recursion stays bounded).
    """
    if isinstance(value, Mapping | list | tuple) and _depth >= _MAX_DEPTH:
        return REDACTED
    if isinstance(value, Mapping):
        return {
            str(key): REDACTED if _is_secret_key(str(key)) else redact(item, _depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(item, _depth + 1) for item in value]
    if isinstance(value, str):
        return scrub_text(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    return scrub_text(str(value))  # an exception, a date: written as its text, so scrubbed as one
