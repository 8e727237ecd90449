"""The watchdog's schedule, ticking in the background on the embedded stack.

moto keeps EventBridge Scheduler schedules but never fires them; the ticker delivers ticks
(``EmbeddedStack.tick``) every ``period`` seconds, with its own phase, until one of them
starts (or joins) a verification run, as the real schedule would keep ticking until then.
With ``keep_ticking`` it ticks until the block ends, as the real schedule does (the chaos run).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from hyperpod_ha_dev.embedded.stack import EmbeddedStack

FOUND = frozenset({"started", "joined", "duplicate"})


@dataclass(frozen=True)
class Tick:
    at: float  # epoch seconds the tick was delivered
    outcome: str | None  # verified, started, joined, ... (None: the invocation failed)
    verdict: str | None
    redundancy: str | None = None
    reasons: tuple[str, ...] = ()


@dataclass
class WatchdogTicker:
    stack: EmbeddedStack
    period: float
    keep_ticking: bool = False
    ticks: list[Tick] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _found: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> WatchdogTicker:
        self._thread = threading.Thread(target=self._loop, name="watchdog-schedule", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.period + 60)

    def _loop(self) -> None:
        while not self._stop.is_set():
            at = time.time()
            result: Any = self.stack.tick()
            answer = result if isinstance(result, dict) else {}
            tick = Tick(
                at,
                answer.get("outcome"),
                answer.get("verdict"),
                answer.get("redundancy"),
                tuple(str(reason) for reason in answer.get("reasons") or ()),
            )
            self.ticks.append(tick)
            if tick.outcome in FOUND:
                self._found.set()
                if not self.keep_ticking:
                    return  # a run is under way: nothing more for the schedule to find
            self._stop.wait(max(0.0, self.period - (time.time() - at)))

    def wait_for_run(self, timeout: float) -> Tick | None:
        """The tick that started a verification run, or None within ``timeout`` seconds."""
        if not self._found.wait(timeout):
            return None
        return next(tick for tick in self.ticks if tick.outcome in FOUND)
