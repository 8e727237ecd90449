"""A run during HyperPod's maintenance: wait for the update to end, then check again.

While the cluster or a controller is being updated (:mod:`hyperpod_ha.controllers.maintenance`),
what the controllers do is the update's doing: HyperPod stops slurmctld, a backup takes over,
ON/OFF messages come in bursts. So a run that sees maintenance says so among its reasons and
waits (the workflow's "Wait while the cluster is under maintenance", ``poll_seconds`` at a
time) whatever its verdict, holding the cluster's lease so that the burst joins it. Once the
update has ended, the run checks again with a convergence window that starts when it saw the
end; only that check's verdict can open an incident. The wait is bounded (``wait_minutes``,
counted from when the run first saw maintenance): past it, the verdict is final and its first
reason says that the maintenance did not end in time.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from hyperpod_ha.controllers.maintenance import Maintenance
from hyperpod_ha.human_time import duration
from hyperpod_ha.verdict.convergence import parse_time
from hyperpod_ha.verdict.models import ConvergenceInputError
from hyperpod_ha.verdict.reasons import Reason, ReasonCode, texts

# The request's bounds (the workflow's settings check says the same, settings_checks.py).
MAX_WAIT_MINUTES: Final = 1440
MIN_POLL_SECONDS, MAX_POLL_SECONDS = 10, 3600
MAX_LEASE_SECONDS: Final = 86_400


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _human(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass(frozen=True)
class MaintenanceWait:
    """What the workflow tells the verdict about maintenance: discovery's view of this check,
    when the run first saw maintenance and its end (``$.maintenance``, ``""`` for not yet),
    and the request's bounds."""

    seen: Maintenance
    since: str
    ended_at: str
    wait_minutes: float
    poll_seconds: float
    lease_seconds: int

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> MaintenanceWait | None:
        """``None`` when the event has no ``maintenance`` (a single check, no workflow)."""
        if "maintenance" not in event:
            return None
        seen = Maintenance.from_json(event["maintenance"])
        so_far = event.get("maintenance_wait", {})
        if not isinstance(so_far, Mapping):
            raise ConvergenceInputError("maintenance_wait is not a JSON object")
        since, ended_at = so_far.get("since", ""), so_far.get("ended_at", "")
        if not isinstance(since, str) or not isinstance(ended_at, str):
            raise ConvergenceInputError("maintenance_wait.since and ended_at must be strings")
        try:
            wait_minutes = float(event.get("maintenance_wait_minutes", 0))
            poll_seconds = float(event.get("maintenance_poll_seconds", MAX_POLL_SECONDS))
            lease_seconds = int(event.get("lease_seconds", 0))
        except (TypeError, ValueError) as error:
            raise ConvergenceInputError(f"bad maintenance input: {error}") from None
        if not 0 <= wait_minutes <= MAX_WAIT_MINUTES:
            raise ConvergenceInputError(f"maintenance_wait_minutes is outside 0-{MAX_WAIT_MINUTES}")
        if not MIN_POLL_SECONDS <= poll_seconds <= MAX_POLL_SECONDS:
            raise ConvergenceInputError(
                f"maintenance_poll_seconds is outside {MIN_POLL_SECONDS}-{MAX_POLL_SECONDS}"
            )
        if not 0 <= lease_seconds <= MAX_LEASE_SECONDS:
            raise ConvergenceInputError(f"lease_seconds is outside 0-{MAX_LEASE_SECONDS}")
        return cls(seen, since, ended_at, wait_minutes, poll_seconds, lease_seconds)


@dataclass(frozen=True)
class MaintenancePlan:
    """What maintenance means for this check: wait (``wait_seconds``), give up waiting
    (``expired``), or check as usual, since ``ended_at`` when maintenance was seen before."""

    seen: Maintenance
    since: dt.datetime | None
    ended_at: dt.datetime | None
    waited_seconds: int
    bound_seconds: int
    wait_seconds: int  # > 0: wait this long, then check again
    expired: bool  # still under maintenance once the bound has passed: the verdict is final
    lease_until: int  # epoch seconds the run keeps the cluster's lease until, while it waits

    @property
    def waiting(self) -> bool:
        return self.wait_seconds > 0

    def notes(self) -> list[Reason]:
        """The reasons this plan adds before the verdict's own."""
        if self.expired:
            since = _human(self.since) if self.since else "the first check"
            text = (
                f"maintenance did not end within {duration(self.bound_seconds)} ({self.seen.describe()}, "
                f"seen since {since}): the incident is no longer deferred"
            )
            return [Reason(ReasonCode.MAINTENANCE_OVERDUE, text)]
        if self.seen.in_progress:
            deferred = (
                "incident deferred until it ends" if self.bound_seconds else "MaintenanceWaitMinutes is 0"
            )
            return [Reason(ReasonCode.MAINTENANCE_IN_PROGRESS, f"{self.seen.describe()} ({deferred})")]
        if self.since and self.ended_at:
            text = (
                f"maintenance seen from {_human(self.since)} until {_human(self.ended_at)}; "
                "this verdict comes from the checks after it"
            )
            return [Reason(ReasonCode.MAINTENANCE_ENDED, text)]
        return []

    def to_json(self) -> dict[str, Any]:
        return {
            **self.seen.to_json(),
            "since": _iso(self.since) if self.since else "",
            "ended_at": _iso(self.ended_at) if self.ended_at else "",
            "waited_seconds": self.waited_seconds,
            "expired": self.expired,
            # DynamoDB's number as text: the workflow writes it into the lease as it is.
            "lease_until": str(self.lease_until),
            "note": "; ".join(texts(self.notes()))[:1024],
        }


def plan(wait: MaintenanceWait, now: dt.datetime) -> MaintenancePlan:
    since = parse_time(wait.since, "maintenance_wait.since") if wait.since else None
    ended_at = parse_time(wait.ended_at, "maintenance_wait.ended_at") if wait.ended_at else None
    bound = math.floor(wait.wait_minutes * 60)
    if wait.seen.in_progress:
        since = since or now
        ended_at = None  # a second update after the first: the bound still counts from the first
    elif since is not None and ended_at is None:
        ended_at = now
    waited = max(0, math.floor((now - since).total_seconds())) if since else 0
    left = bound - waited
    waiting = wait.seen.in_progress and bound > 0 and left > 0
    wait_seconds = math.ceil(min(wait.poll_seconds, left)) if waiting else 0
    return MaintenancePlan(
        seen=wait.seen,
        since=since,
        ended_at=ended_at,
        waited_seconds=waited,
        bound_seconds=bound,
        wait_seconds=wait_seconds,
        expired=wait.seen.in_progress and bound > 0 and left <= 0,
        lease_until=math.floor(now.timestamp()) + wait_seconds + wait.lease_seconds,
    )
