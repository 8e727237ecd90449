"""What a drill is asked (validated once, at its first step) and what it reports."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final, Literal

from hyperpod_ha.errors import InputRejected
from hyperpod_ha.request_fields import is_cluster_name

Outcome = Literal["completed", "refused", "failed"]
PhaseName = Literal["takeover", "hand-back"]

# A controller named by host name, IP address or instance id; or "auto".
_TARGET = re.compile(r"^(auto|[A-Za-z0-9][A-Za-z0-9.-]{0,252})$")
MAX_CHECKS: Final = 60
MAX_POLL_SECONDS: Final = 600


class InvalidDrillRequest(InputRejected):
    """The drill's input is not what the state machine takes (a ``ValueError`` too); safe to log."""


class DrillStepRefused(InvalidDrillRequest):
    """A step that runs a command on a controller refused before running it: this drill does not
    hold the cluster's lease, or the node is not a controller this cluster's discovery finds now
    (with that target); or the lease's or the report's step (``begin``, ``finish``) was not
    invoked by a running execution of this stack's drill state machine. Nothing was run,
    written or sent; the reason is safe to log."""


@dataclass(frozen=True)
class DrillRequest:
    cluster: str
    to: str = "auto"
    hand_back: bool = False
    dry_run: bool = False
    poll_seconds: int = 5
    max_checks: int = 24
    test_job_checks: int = 12

    @classmethod
    def from_json(cls, data: object) -> DrillRequest:
        if not isinstance(data, Mapping):
            raise InvalidDrillRequest("the drill request is not a JSON object")
        cluster, to = data.get("cluster"), data.get("to", "auto")
        if not is_cluster_name(cluster):
            raise InvalidDrillRequest("cluster must be a HyperPod cluster name")
        if not isinstance(to, str) or not _TARGET.match(to):
            raise InvalidDrillRequest(
                "to must be 'auto' or a controller's host name, IP address or instance id"
            )
        flags = {name: data.get(name, False) for name in ("hand_back", "dry_run")}
        if not all(isinstance(value, bool) for value in flags.values()):
            raise InvalidDrillRequest("hand_back and dry_run must be booleans")
        numbers = {
            name: data.get(name, default)
            for name, default in (("poll_seconds", 5), ("max_checks", 24), ("test_job_checks", 12))
        }
        for name, value in numbers.items():
            high = MAX_POLL_SECONDS if name == "poll_seconds" else MAX_CHECKS
            low = 0 if name == "poll_seconds" else 1
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InvalidDrillRequest(f"{name} must be an integer from {low} to {high}")
        return cls(cluster, to, flags["hand_back"], flags["dry_run"], **numbers)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ControllerRef:
    """One controller as the drill addresses it: Slurm's position and name, SSM's target."""

    index: int
    name: str
    instance_id: str
    target: str
    hostname: str | None = None
    private_ip: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> ControllerRef:
        if not isinstance(data, Mapping):
            raise InvalidDrillRequest("controller is not an object")
        try:
            return cls(
                index=int(data["index"]),
                name=str(data["name"]),
                instance_id=str(data["instance_id"]),
                target=str(data["target"]),
                hostname=data.get("hostname"),
                private_ip=data.get("private_ip"),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise InvalidDrillRequest(f"controller is missing {error}") from None

    def known_as(self, name: str) -> bool:
        return name in {self.name, self.hostname, self.private_ip, self.instance_id}


@dataclass(frozen=True)
class DrillPlan:
    """Refused (with the reason), or who hands control to whom."""

    refused: str | None
    primary: ControllerRef | None = None
    target: ControllerRef | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "refused": self.refused,
            "primary": self.primary.to_json() if self.primary else None,
            "target": self.target.to_json() if self.target else None,
        }
