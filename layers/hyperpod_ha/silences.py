"""The operator's silences: a bounded maintenance window on one cluster (``hyperpod-ha silence``).

While a silence is in force the stack still verifies and records every verdict, but nothing
pages: no incident is opened (no OpsItem, no Incident Manager incident, no "opened" or "still
open" message), no notice is published, and the restore of redundancy does nothing (its guard
says ``silenced``). A resolution still goes out: it closes a page, it never makes one. Each step
that would page or act reads the silence when it does (:meth:`Silences.in_force`), so a silence
ended early (or past its end) lets the next one page.

A silence lasts from :data:`MIN_SECONDS` to :data:`MAX_SECONDS` (24 hours: a longer window is
a stack switched off, and should be said so by switching it off); its reason is one printable
line of at most :data:`MAX_REASON_CHARS` characters, redacted. Who started and who ended it is
the caller's ARN (``sts:GetCallerIdentity``). One item per cluster in the state table
(``silence#<cluster>``, :mod:`hyperpod_ha.state_table`) holds the last silence and the
:data:`HISTORY_KEPT` before it, for the audit; the item expires :data:`AUDIT_SECONDS` after the
last silence's end. A silence that cannot be read pages: a failed read never silences.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import BotoCoreError, ClientError

from hyperpod_ha import state_table
from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.errors import HyperpodHaError, InputRejected
from hyperpod_ha.human_time import duration, iso_utc
from hyperpod_ha.observability import logger
from hyperpod_ha.redaction import scrub_text
from hyperpod_ha.request_fields import MAX_ID_CHARS, bounded_text, is_cluster_name

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MIN_SECONDS: Final = 60
MAX_SECONDS: Final = 24 * 3600
MAX_REASON_CHARS: Final = 512
HISTORY_KEPT: Final = 20
AUDIT_SECONDS: Final = 90 * 86400


class SilenceRejected(InputRejected):
    """A silence asked for with a duration, reason or caller out of bounds (nothing written)."""


class SilenceConflict(HyperpodHaError):
    """A silence cannot be started (one is in force) or ended (none is in force)."""


@dataclass(frozen=True)
class Silence:
    """One silence: from ``started_at`` to ``until`` (epoch seconds), or to ``ended_at`` when ended
    early by ``ended_by``."""

    cluster: str
    silence_id: str
    started_at: int
    until: int
    started_by: str
    reason: str
    ended_at: int | None = None
    ended_by: str | None = None

    def in_force(self, now: float) -> bool:
        return self.ended_at is None and self.started_at <= now < self.until

    @property
    def ends_at(self) -> int:
        """When it ended or ends: early, or at ``until``."""
        return self.until if self.ended_at is None else min(self.ended_at, self.until)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """``silenced until 2026-12-06T16:00:00Z by arn:...: <reason>``: for logs and refusals."""
        return f"silenced until {iso_utc(self.until)} by {self.started_by}: {self.reason}"

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Silence:
        """A silence as the state table keeps it; :class:`SilenceRejected` for one this code did
        not write."""
        try:
            ended_at = values.get("ended_at")
            ended_by = values.get("ended_by")
            silence = cls(
                cluster=str(values["cluster"]),
                silence_id=str(values["silence_id"]),
                started_at=int(values["started_at"]),
                until=int(values["until"]),
                started_by=str(values["started_by"]),
                reason=str(values["reason"]),
                ended_at=None if ended_at is None else int(ended_at),
                ended_by=None if ended_by is None else str(ended_by),
            )
        except (KeyError, TypeError, ValueError):
            raise SilenceRejected("the silence item is not one hyperpod-ha wrote") from None
        if not is_cluster_name(silence.cluster) or silence.until - silence.started_at > MAX_SECONDS:
            raise SilenceRejected("the silence item is not one hyperpod-ha wrote")
        return silence


@dataclass(frozen=True)
class SilenceRecord:
    """The cluster's silence item: the last silence (in force or not) and those before it, newest
    first."""

    last: Silence | None
    history: tuple[Silence, ...] = ()

    def in_force(self, now: float) -> Silence | None:
        return self.last if self.last is not None and self.last.in_force(now) else None

    def to_json(self, now: float) -> dict[str, Any]:
        current = self.in_force(now)
        return {
            "in_force": None if current is None else current.to_json(),
            "silences": [s.to_json() for s in ((self.last,) if self.last else ()) + self.history],
        }


def silence_reason(text: str) -> str:
    """The reason as kept: one printable line of 1 to :data:`MAX_REASON_CHARS` characters (else
    :class:`SilenceRejected`), with anything secret-looking redacted."""
    reason = text.strip()
    if not reason:
        raise SilenceRejected("a silence needs a reason")
    if len(reason) > MAX_REASON_CHARS:
        raise SilenceRejected(f"the reason is longer than {MAX_REASON_CHARS} characters")
    if not reason.isprintable():
        raise SilenceRejected("the reason must be one line of printable characters")
    # The redaction's marker may be longer than what it hides: cut again to the bound.
    return bounded_text(scrub_text(reason), MAX_REASON_CHARS)


def silence_seconds(seconds: int) -> int:
    if isinstance(seconds, bool) or not isinstance(seconds, int) or not MIN_SECONDS <= seconds <= MAX_SECONDS:
        raise SilenceRejected(
            f"a silence lasts from {duration(MIN_SECONDS)} to {duration(MAX_SECONDS)} "
            f"(at most {MAX_SECONDS // 3600} h)"
        )
    return seconds


def caller(arn: str) -> str:
    """Who acts, as STS names them (an ARN); :class:`SilenceRejected` for anything else."""
    if not arn.startswith("arn:") or len(arn) > MAX_ID_CHARS or not arn.isprintable():
        raise SilenceRejected("the caller is not an ARN")
    return arn


@dataclass(frozen=True)
class Silences:
    """The state table's silences of one stack (its functions and the operator's command)."""

    dynamodb: DynamoDBClient
    table: str
    clock: Callable[[], float] = time.time

    def read(self, cluster: str) -> SilenceRecord:
        values = state_table.read_silence(self.dynamodb, self.table, cluster)
        return record_of(values)

    def in_force(self, cluster: str) -> Silence | None:
        """The silence in force on ``cluster`` now, or ``None``; also ``None`` (logged) when it
        cannot be read: a failed read pages rather than silences."""
        try:
            silence = self.read(cluster).in_force(self.clock())
        except (ClientError, BotoCoreError, SilenceRejected) as error:
            why = error_code(error) if isinstance(error, ClientError) else type(error).__name__
            logger.warning("the silence could not be read: not silenced", extra={"reason": why})
            return None
        if silence is not None:
            logger.info("silenced", extra={"silence": silence.to_json()})
        return silence

    def start(self, cluster: str, seconds: int, reason: str, by: str) -> Silence:
        """A new silence of ``seconds`` from now; :class:`SilenceConflict` while one is in force."""
        now = int(self.clock())
        silence = Silence(
            cluster=cluster,
            silence_id=uuid.uuid4().hex[:16],
            started_at=now,
            until=now + silence_seconds(seconds),
            started_by=caller(by),
            reason=silence_reason(reason),
        )
        found = self.read(cluster)
        if (current := found.in_force(now)) is not None:
            raise SilenceConflict(f"a silence is in force: {current.describe()}; end it first")
        history = ((found.last,) if found.last else ()) + found.history
        values = {
            **_kept(silence),
            "history": [_kept(s) for s in history[:HISTORY_KEPT]],
            "expires_at": silence.until + AUDIT_SECONDS,
        }
        previous = None if found.last is None else found.last.silence_id
        if state_table.put_silence(self.dynamodb, self.table, cluster, values, previous, now) is not None:
            raise SilenceConflict("another silence was started at the same time: list them and try again")
        return silence

    def end(self, cluster: str, by: str) -> Silence:
        """End the silence in force now; :class:`SilenceConflict` when none is (ended or past)."""
        now = int(self.clock())
        who = caller(by)
        current = self.read(cluster).in_force(now)
        if current is None:
            raise SilenceConflict(f"no silence is in force on cluster {cluster}")
        ended = state_table.end_silence(self.dynamodb, self.table, cluster, current.silence_id, now, who)
        if ended is not None:
            raise SilenceConflict(f"no silence is in force on cluster {cluster} (it ended meanwhile)")
        return replace(current, ended_at=now, ended_by=who)


def _kept(silence: Silence) -> dict[str, Any]:
    """A silence as the item keeps it: what is not known is absent, not NULL (a condition asks
    ``attribute_exists(ended_at)``)."""
    return {name: value for name, value in silence.to_json().items() if value is not None}


def record_of(values: Mapping[str, Any] | None) -> SilenceRecord:
    """The item's silences; :class:`SilenceRejected` when it is not one this code wrote."""
    if values is None:
        return SilenceRecord(None)
    history = values.get("history") or []
    if not isinstance(history, list):
        raise SilenceRejected("the silence item is not one hyperpod-ha wrote")
    past = tuple(Silence.from_values(item) for item in history[:HISTORY_KEPT] if isinstance(item, Mapping))
    return SilenceRecord(Silence.from_values(values), past)
