"""What the lab records in ``<root>/lab.json``, and the heartbeat file it reads."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hyperpod_lab.processes import (
    LabError,
)
from hyperpod_lab.topology import (
    Topology,
)

# The active controller replaces the heartbeat (24.11: write heartbeat.new, unlink, link):
# a reader may find no file for an instant, so a missing file is looked for again.
HEARTBEAT_READS = 3


@dataclass(frozen=True)
class Heartbeat:
    """``<StateSaveLocation>/heartbeat``: written only by the active controller."""

    beat_time: int  # when the writer last beat (epoch seconds, from the file)
    writer_index: int  # 0 = first SlurmctldHost
    mtime: float

    @classmethod
    def parse(cls, raw: bytes, mtime: float) -> Heartbeat:
        if len(raw) != 16:
            raise LabError(f"heartbeat file has {len(raw)} bytes, expected 16")
        beat_time, writer_index = struct.unpack(">qq", raw)
        return cls(beat_time, writer_index, mtime)


@dataclass(frozen=True)
class UpReport:
    seconds: float
    reused: bool  # the lab was already up and healthy; nothing was rebuilt
    built_slurm: bool = False  # this up built its Slurm release (once per machine); else reused


@dataclass
class LabState:
    """What the lab started and changed; saved after every step so teardown finds it."""

    topology: Topology
    holders: dict[str, int] = field(default_factory=dict)
    isolated: list[str] = field(default_factory=list)
    read_only: list[str] = field(default_factory=list)  # hosts whose StateSaveLocation is read-only
    heartbeat_hidden: list[str] = field(default_factory=list)  # hosts that cannot read the heartbeat
    ready: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "topology": self.topology.to_json(),
            "holders": self.holders,
            "isolated": self.isolated,
            "read_only": self.read_only,
            "heartbeat_hidden": self.heartbeat_hidden,
            "ready": self.ready,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LabState:
        return cls(
            topology=Topology.from_json(data["topology"]),
            holders={str(host): int(pid) for host, pid in data["holders"].items()},
            isolated=[str(host) for host in data["isolated"]],
            read_only=[str(host) for host in data.get("read_only", [])],
            heartbeat_hidden=[str(host) for host in data.get("heartbeat_hidden", [])],
            ready=data["ready"] is True,
        )


def read_state(root: Path) -> LabState | None:
    try:
        return LabState.from_json(json.loads((root / "lab.json").read_text()))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        # No lab, or a state file from something else: teardown still finds the lab by name.
        return None
