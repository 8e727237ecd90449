"""The lab's ON/OFF programs, published: HyperPod's SlurmctldPrimaryOnProg/OffProg publish on the
cluster's failover topic; the lab's append the same message, with its UTC time, to the shared
controller status log (it has no topic). While the block runs, every new line is published on
the embedded stack's failover topic as the program would have, about a second later."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Final

from hyperpod_ha.observability import logger
from hyperpod_ha_dev.simulation.engine import EmbeddedRun
from hyperpod_lab import Lab

POLL_SECONDS: Final = 1.0


def message_of(line: str) -> str:
    """``2026-12-04T10:00:00Z Slurm Controller is ON, (...)`` -> the message after the time."""
    _, _, message = line.partition(" ")
    return message.strip()


@dataclass(frozen=True)
class Published:
    at: float  # epoch seconds it was published
    message: str


@dataclass
class StatusLogPublisher:
    lab: Lab
    run: EmbeddedRun
    published: list[Published] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _seen: int = 0

    def __enter__(self) -> StatusLogPublisher:
        self._seen = len(self.lab.controller_status_messages())  # what was written before is old
        self._thread = threading.Thread(target=self._loop, name="on-off-programs", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self.publish_new()  # what the programs wrote last

    def _loop(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            self.publish_new()

    def publish_new(self) -> None:
        lines = self.lab.controller_status_messages()
        for line in lines[self._seen :]:
            message = message_of(line)
            if message:
                self.run.notify(message)
                self.published.append(Published(time.time(), message))
                logger.info("ON/OFF program message published", extra={"published": message[:200]})
        self._seen = max(self._seen, len(lines))
