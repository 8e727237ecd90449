"""The chaos run's schedule: which faults of the lab's catalog, on which host, when, and when each
is healed. Pure: the same seed and lab give the same plan.

Only faults that have a heal in the catalog are chosen (``kill``/``start``, ``stop``/``cont``,
``cut``/``heal``, ...), and one at a time: each is healed before the next is injected, so the
lab is never in a state that two overlapping faults made and the final heal (the lab's baseline
repair) could not undo. A quiet gap comes first and between faults, so the watchdog sees the
cluster as it is between them too.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

# Every fault the chaos injects, and the catalog's fault that heals it (hyperpod_lab.faults.FAULTS).
HEALS: Final[Mapping[str, str]] = {
    "kill": "start",
    "stop": "cont",
    "cut": "heal",
    "dbd-stop": "dbd-start",
    "state-ro": "state-rw",
    "heartbeat-unreadable": "heartbeat-readable",
    "conf-drift": "conf-shared",
    "onprog-off": "conf-shared",
}
# The faults that also apply to a compute node (the rest act on a controller's daemons or files).
ANY_HOST: Final = frozenset({"cut"})
# Seconds a fault lasts before its heal, and of quiet before each fault (uniform in the range).
# A verification run against the lab takes 30-90 s on two loaded cores: a fault is not healed
# before the watchdog's next tick (every 20-30 s) has seen it, and the cluster has time to settle.
FAULT_SECONDS: Final = (30.0, 80.0)
QUIET_SECONDS: Final = (20.0, 45.0)
MAX_MINUTES: Final = 120.0


class ChaosPlanError(ValueError):
    """The plan cannot be made as asked (minutes, hosts). The reason is safe to log."""


@dataclass(frozen=True)
class PlannedFault:
    """One fault: injected ``at`` seconds after the chaos starts, healed ``heal_at``."""

    at: float
    fault: str
    host: str
    heal: str
    heal_at: float

    def to_json(self) -> dict[str, Any]:
        return {
            "at": round(self.at, 1),
            "fault": self.fault,
            "host": self.host,
            "heal": self.heal,
            "heal_at": round(self.heal_at, 1),
        }


@dataclass(frozen=True)
class ChaosPlan:
    seed: int
    minutes: float
    faults: tuple[PlannedFault, ...]

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "minutes": self.minutes, "faults": [f.to_json() for f in self.faults]}


def plan_chaos(
    seed: int,
    minutes: float,
    controllers: Sequence[str],
    nodes: Sequence[str] = (),
    *,
    fault_seconds: tuple[float, float] = FAULT_SECONDS,
    quiet_seconds: tuple[float, float] = QUIET_SECONDS,
) -> ChaosPlan:
    """The faults of a ``minutes``-long chaos on a lab with these hosts, from ``seed``: each one
    healed before the next, the last healed by the end."""
    if not 0 < minutes <= MAX_MINUTES:
        raise ChaosPlanError(f"minutes must be more than 0 and at most {MAX_MINUTES:g}")
    if not controllers:
        raise ChaosPlanError("the lab has no controller to inject faults into")
    chooser = random.Random(seed)  # noqa: S311 (a reproducible schedule, not a secret)
    end = minutes * 60
    faults: list[PlannedFault] = []
    at = chooser.uniform(*quiet_seconds)
    while True:
        fault = chooser.choice(sorted(HEALS))
        hosts = [*controllers, *nodes] if fault in ANY_HOST else list(controllers)
        host = chooser.choice(hosts)
        heal_at = at + chooser.uniform(*fault_seconds)
        if heal_at > end:
            break
        faults.append(PlannedFault(at, fault, host, HEALS[fault], heal_at))
        at = heal_at + chooser.uniform(*quiet_seconds)
    return ChaosPlan(seed, minutes, tuple(faults))
