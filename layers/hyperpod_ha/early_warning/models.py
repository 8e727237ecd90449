"""A controller's figures at one check, the sample the next check compares with, and a warning."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Protocol

KIND_OVERLOADED: Final = "controller-overloaded"
KIND_ACCOUNTING_AT_RISK: Final = "accounting-at-risk"
KINDS: Final = (KIND_OVERLOADED, KIND_ACCOUNTING_AT_RISK)
ACTIVE: Final = "active"
STANDBY: Final = "standby"
# Rows of each RPC table kept in a sample and named in a warning.
SAMPLE_ROWS: Final = 8
NAMED_ROWS: Final = 3


class Judged(Protocol):
    """A verdict (:class:`hyperpod_ha.verdict.Verdict`) as far as the warnings read it: who is
    active (its evidence per controller) and, for an incident, its name and texts. A protocol:
    EvaluateVerdictFunction (the verdict's) tells a run's warnings with :mod:`.rules`, so this
    feature does not import the verdict."""

    @property
    def name(self) -> Enum: ...

    @property
    def evidence(self) -> Mapping[str, Mapping[str, Any]]: ...

    @property
    def texts(self) -> list[str]: ...


@dataclass(frozen=True)
class RpcLoad:
    """A message type or a user over the window: calls and their average time."""

    name: str
    count: int
    average_ms: float

    def phrase(self) -> str:
        return f"{self.name} ({self.count} calls, {self.average_ms:.0f} ms on average)"


@dataclass(frozen=True)
class ControllerFigures:
    """One controller's figures at one check. sdiag's (threads, queues, cycles, RPCs) only for
    the active one: sdiag from any node asks the controller that serves."""

    controller: str
    role: str  # active or standby
    instance_id: str | None = None
    server_threads: int | None = None
    agent_queue: int | None = None
    agent_count: int | None = None
    dbd_agent_queue: int | None = None
    max_dbd_msgs: int | None = None
    main_cycle_last_ms: float | None = None
    backfill_cycle_last_ms: float | None = None
    # All RPCs over the window (the counters' differences), or since sdiag's reset without one.
    rpc_average_ms: float | None = None
    rpc_window_seconds: int | None = None  # None: since sdiag's counters were reset
    slowest_types: tuple[RpcLoad, ...] = ()  # by average time over the window
    busiest_users: tuple[RpcLoad, ...] = ()  # by calls over the window
    dbd_queue_rate: float | None = None  # records a second, + growing (needs the last sample)
    slurmdbd_answers: bool | None = None  # sacctmgr from this node reached slurmdbd and its database
    slurmctld_threads: int | None = None  # the process's threads on this node (/proc)
    round_trip_ms: int | None = None  # sdiag from this node: an RPC to the serving controller
    ping_ms: int | None = None  # `scontrol ping` of every controller from this node
    heartbeat_lag_seconds: int | None = None  # the beat's age by this node's clock
    state_save_write_ms: int | None = None

    @property
    def active(self) -> bool:
        return self.role == ACTIVE

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["slowest_types"] = [row.phrase() for row in self.slowest_types]
        data["busiest_users"] = [row.phrase() for row in self.busiest_users]
        return {key: value for key, value in data.items() if value not in (None, [])}


@dataclass(frozen=True)
class Sample:
    """What the next check needs of this one: the active controller's counters."""

    controller: str
    at: int  # sdiag's time
    since: int | None  # sdiag's reset: counters compared only within one
    dbd_agent_queue: int | None
    types: Mapping[str, tuple[int, int]]  # name -> (count, total microseconds)
    users: Mapping[str, tuple[int, int]]

    def to_json(self) -> dict[str, Any]:
        return {
            "controller": self.controller,
            "at": self.at,
            "since": self.since,
            "dbd_agent_queue": self.dbd_agent_queue,
            "types": {name: list(pair) for name, pair in self.types.items()},
            "users": {name: list(pair) for name, pair in self.users.items()},
        }

    @classmethod
    def from_json(cls, data: object) -> Sample | None:
        """The sample as stored; ``None`` for anything else (a record of another version)."""
        if not isinstance(data, Mapping):
            return None
        controller, at, since, queue = (data.get(k) for k in ("controller", "at", "since", "dbd_agent_queue"))
        types, users = _rows(data.get("types")), _rows(data.get("users"))
        if not isinstance(controller, str) or not isinstance(at, int) or types is None or users is None:
            return None
        return cls(
            controller=controller[:240],
            at=at,
            since=since if isinstance(since, int) else None,
            dbd_agent_queue=queue if _whole(queue) and isinstance(queue, int) else None,
            types=types,
            users=users,
        )


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _rows(value: object) -> dict[str, tuple[int, int]] | None:
    if not isinstance(value, Mapping) or len(value) > SAMPLE_ROWS:
        return None
    rows: dict[str, tuple[int, int]] = {}
    for name, pair in value.items():
        if not isinstance(name, str) or not isinstance(pair, list) or len(pair) != 2:
            return None
        if not all(map(_whole, pair)):
            return None
        rows[name[:64]] = (pair[0], pair[1])
    return rows


@dataclass(frozen=True)
class EarlyWarning:
    """A warning of one kind on one controller: its figures and, each with its code, why."""

    kind: str
    controller: str
    headline: str  # the figures past their thresholds, in one line
    reasons: tuple[str, ...]
    codes: tuple[str, ...]  # one stable code per threshold passed (rules.WARNINGS)
    figures: ControllerFigures

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "controller": self.controller,
            "headline": self.headline,
            "codes": list(self.codes),
            "reasons": list(self.reasons),
            "figures": self.figures.to_json(),
        }
