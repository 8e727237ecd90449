"""What is left of the cluster's high availability: which controllers are ready standbys.

The verdict says what happened to the failover (HEALTHY, FAILED_OVER, ...); redundancy says what
is left for the next one. A ready standby is a configured controller other than the active one
whose slurmctld runs (not stopped), whose log last said it holds the standby role, that answers
ping and that can read the heartbeat (and does not refuse to take over now). One rule for two
and three controllers; the configured primary after a failover is counted like any other
controller: ready once it runs as a standby, not ready while it is down.

The level: ``full`` (every configured backup ready), ``reduced`` (some), ``none`` (no ready
standby: one more failure stops the cluster), ``unknown`` (not one active controller, or no
standby ready and the evidence of one missing: an unknown is never counted ready, and never
taken as gone)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from hyperpod_ha.verdict.activity import hung
from hyperpod_ha.verdict.observation import Observation, ObservedController
from hyperpod_ha.verdict.phrases import why_unchecked
from hyperpod_ha.verdict.reasons import Reason, ReasonCode
from hyperpod_ha.verdict.takeover import refusal

Level = Literal["full", "reduced", "none", "unknown"]
LEVELS: Final[tuple[Level, ...]] = ("full", "reduced", "none", "unknown")
# The reason in a verified verdict (and its notice) when no standby is ready.
NO_STANDBY: Final = "no standby is ready: one more failure stops the cluster"


@dataclass(frozen=True)
class Standby:
    """One configured controller other than the active one: ready, or why not. ``known``:
    False when the evidence that would decide is missing (then it is not ready either)."""

    name: str
    ready: bool
    reason: str = ""
    known: bool = True


@dataclass(frozen=True)
class Redundancy:
    level: Level
    # The ready standbys' names, in SlurmctldHost order.
    standbys: tuple[str, ...] = ()
    # Every other configured controller that is not ready: name -> a short reason.
    not_ready: Mapping[str, str] = field(default_factory=dict)
    active: str | None = None

    def lost_reason(self) -> Reason:
        """A verdict's reason when no standby is ready: who is active, why the others are not."""
        others = "; ".join(f"{name}: {why}" for name, why in self.not_ready.items())
        active = f" ({self.active} is active" + (f"; {others})" if others else ")")
        return Reason(ReasonCode.NO_READY_STANDBY, NO_STANDBY + (active if self.active else ""))


def redundancy(seen: Observation, active: ObservedController | None) -> Redundancy:
    """The ready standbys beside ``active`` (None: no single active controller: ``unknown``)."""
    if active is None or active.index is None or not seen.controllers:
        return Redundancy("unknown", active=active.key if active else None)
    others = [seen.controllers[i] for i in sorted(seen.controllers) if i != active.index]
    judged = [standby(seen, other, active) for other in others]
    ready = tuple(s.name for s in judged if s.ready)
    not_ready = {s.name: s.reason for s in judged if not s.ready}
    level: Level
    if others and len(ready) == len(others):
        level = "full"
    elif ready:
        level = "reduced"
    elif any(not s.known for s in judged):
        level = "unknown"
    else:
        level = "none"
    return Redundancy(level, ready, not_ready, active.key)


def standby(seen: Observation, other: ObservedController, active: ObservedController) -> Standby:
    """Whether ``other`` is ready to take over from ``active`` (both configured controllers),
    from the probe's fields only: the first rule that holds says why not."""
    assert active.index is not None
    assert other.index is not None
    report = other.checked
    up = seen.responding(other.index)
    if report is None:
        why = why_unchecked(other.report)
        if up:
            return Standby(other.key, False, f"could not be checked ({why}) but answers ping", known=False)
        return Standby(other.key, False, f"could not be checked ({why}) and does not answer ping")
    daemon, role, readable = report.slurmctld, report.role.logged, report.heartbeat.readable
    # (holds, why not, known): in order; an unknown field is never taken as ready nor as gone.
    rules: tuple[tuple[bool, str, bool], ...] = (
        (daemon.stopped, f"slurmctld stopped (process state {daemon.process_state or '?'})", True),
        (daemon.running is None, "whether slurmctld runs is unknown", False),
        (daemon.running is False, "slurmctld not running", True),
        (hung(seen, other), "slurmctld running but not answering ping", True),
        (role is None, "no role line found in its log", False),
        (role not in (None, "standby"), f"its log says {(role or '').replace('_', ' ')}, not standby", True),
        (up is None, "no controller's ping says whether it answers", False),
        (seen.seen_by(active.index, other.index) is False, f"does not answer ping from {active.key}", True),
        (readable is None, "whether it can read the heartbeat is unknown", False),
        (readable is False, "cannot read the heartbeat", True),
        (refusal(seen, other) is not None, "refuses to take over now", True),
    )
    for holds, why, known in rules:
        if holds:
            return Standby(other.key, False, why, known)
    return Standby(other.key, True)
