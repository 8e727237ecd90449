"""The lab's failover topic: what the lab's hosts publish, relayed to the embedded stack's.

On HyperPod a program on a controller (a Slurm trigger's, HyperPod's ON/OFF) runs ``aws sns
publish`` with the instance role. The lab has neither SNS nor a role: while a
:class:`FailoverTopicRelay` runs, the stand-in ``aws`` (:mod:`hyperpod_ha_dev.simulation.node_aws_cli`)
sits where an instance has its AWS CLI (``LabPaths.aws_cli_dir``, on the PATH of every command
and daemon of the lab's hosts), answers ``sns publish`` by appending one JSON line to the lab's
outbox on the shared file system, and this relay publishes each new line on the embedded stack's
failover topic with its subject, about half a second later. A line for another topic is not
relayed (SNS would refuse the publish: the role names only the cluster's topic); a line that is
not one of the stand-in's is skipped. Both are kept in :attr:`FailoverTopicRelay.refused`.

The stand-in is removed when the relay ends: the lab's hosts then publish nothing, as a node
whose topic cannot be reached (the trigger's program logs the failure).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from hyperpod_ha.human_time import parse_utc
from hyperpod_ha.observability import logger
from hyperpod_ha_dev.simulation import node_aws_cli
from hyperpod_ha_dev.simulation.engine import EmbeddedRun
from hyperpod_ha_dev.simulation.lab.node_secret import INTERPRETER
from hyperpod_lab import Lab

POLL_SECONDS: Final = 0.5
# What one poll reads at most: a line is at most about 50 KiB (the stand-in's bound, escaped).
READ_BYTES: Final = 1024 * 1024
REFUSED_KEPT: Final = 100


@dataclass(frozen=True)
class Relayed:
    """One publish of a lab host, relayed."""

    written_at: float | None  # epoch seconds: when the host's aws wrote it (its own clock)
    relayed_at: float  # when the embedded topic took it
    subject: str | None
    message: str
    message_id: str  # the embedded topic's MessageId (the SNS record's, as the function sees it)


def outbox_entry(line: str) -> Mapping[str, Any] | None:
    """A line of the stand-in's: an object with a ``topic_arn`` and a ``message`` (strings) and
    a ``subject`` (a string or null); None for anything else."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict):
        return None
    if not isinstance(entry.get("topic_arn"), str) or not isinstance(entry.get("message"), str):
        return None
    if not isinstance(entry.get("subject"), str | None) or not isinstance(entry.get("at"), str | None):
        return None
    return entry


@dataclass
class FailoverTopicRelay:
    lab: Lab
    run: EmbeddedRun
    relayed: list[Relayed] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _thread: threading.Thread | None = None
    _offset: int = 0
    _partial: bytes = b""

    @property
    def outbox(self) -> Path:
        return self.lab.paths.sns_outbox

    @property
    def stand_in(self) -> Path:
        return self.lab.paths.aws_cli_dir / node_aws_cli.COMMAND

    def __enter__(self) -> FailoverTopicRelay:
        self._offset = self.outbox.stat().st_size if self.outbox.exists() else 0  # earlier lines are old
        node_aws_cli.install(self.lab.paths.aws_cli_dir, INTERPRETER, outbox=self.outbox)
        self._thread = threading.Thread(target=self._loop, name="failover-topic-relay", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        try:
            self.relay_new()  # what the hosts published last
        finally:
            self.stand_in.unlink(missing_ok=True)

    def _loop(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            try:
                self.relay_new()
            except Exception:  # one bad poll (a moto hiccup) must not end the relay
                logger.exception("failover topic relay: a poll failed")

    def relay_new(self) -> list[Relayed]:
        """Relay every complete line written since the last call; what was relayed."""
        with self._lock:
            lines = self._read_lines()
            done = [relayed for line in lines if (relayed := self._relay(line)) is not None]
            self.relayed.extend(done)
            return done

    def _read_lines(self) -> list[str]:
        try:
            with self.outbox.open("rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read(READ_BYTES)
        except FileNotFoundError:
            return []
        self._offset += len(chunk)
        data = self._partial + chunk
        *complete, self._partial = data.split(b"\n")
        return [line.decode("utf-8", errors="replace") for line in complete if line.strip()]

    def _relay(self, line: str) -> Relayed | None:
        entry = outbox_entry(line)
        if entry is None:
            self._refuse(f"not a line of the stand-in's: {line[:120]!r}")
            return None
        topic = self.run.site.failover_topic_arn
        if entry["topic_arn"] != topic:
            self._refuse(f"published on {entry['topic_arn'][:120]!r}, not the failover topic {topic}")
            return None
        subject, message = entry.get("subject"), entry["message"]
        message_id = self.run.notify(message, subject=subject)
        relayed = Relayed(parse_utc(entry.get("at")), time.time(), subject, message, message_id)
        logger.info(
            "lab host's publish relayed",
            extra={"subject": (subject or "")[:100], "relayed": message[:200], "message_id": message_id},
        )
        return relayed

    def _refuse(self, why: str) -> None:
        logger.warning("failover topic relay: not relayed", extra={"why": why})
        if len(self.refused) < REFUSED_KEPT:
            self.refused.append(why)


def slurmctld_path(lab: Lab, host: str) -> list[str] | None:
    """The PATH of ``host``'s running slurmctld (what its trigger programs start with), from its
    environment; None when it does not run."""
    pid = lab.pid(host, "slurmctld")
    if pid is None:
        return None
    try:
        environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    for entry in environment:
        if entry.startswith(b"PATH="):
            return os.fsdecode(entry[5:]).split(":")
    return []
