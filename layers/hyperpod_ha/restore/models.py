"""What a restore plans and does: one action per controller, the plan, and what else holds the
cluster (the guards' inputs that are not in the controllers' reports)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal

from hyperpod_ha.restore.errors import InvalidRestoreRequest
from hyperpod_ha.restore.settings import RestoreMode

ActionKind = Literal["start-slurmctld", "hand-back", "reboot-node"]
ACTION_KINDS: Final[frozenset[str]] = frozenset({"start-slurmctld", "hand-back", "reboot-node"})
MAX_ACTIONS: Final = 10  # as many as RestoreMaxPerHour allows at most
_TEXT_LIMIT: Final = 512
# An SSM target (an instance id, or HyperPod's sagemaker-cluster:<id>_<group>-<instance>).
_TARGET: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:_.-]{0,255}$")
# BatchRebootClusterNodes' NodeIds pattern (botocore's service model): i- and 8 or 17 hex digits.
INSTANCE_ID: Final = re.compile(r"^i-[a-f0-9]{8}(?:[a-f0-9]{9})?$")


@dataclass(frozen=True)
class RestoreAction:
    """Start slurmctld on one controller: a standby (``start-slurmctld``) or the configured
    primary after a failover (``hand-back``: started, it asks for control back); or reboot the
    node of a controller unreachable through SSM (``reboot-node``: ``BatchRebootClusterNodes``,
    then slurmctld is started on it as on a standby)."""

    kind: ActionKind
    controller: str  # its SlurmctldHost name
    index: int  # its SlurmctldHost position (0: the configured primary)
    instance_id: str
    target: str
    why: str
    command: str  # what an operator runs by hand for the same action

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> RestoreAction:
        if not isinstance(data, Mapping):
            raise InvalidRestoreRequest("a restore action is not a JSON object")
        kind, index = data.get("kind"), data.get("index")
        if kind not in ACTION_KINDS:
            raise InvalidRestoreRequest(
                "a restore action's kind is none of start-slurmctld, hand-back, reboot-node"
            )
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= 9:
            raise InvalidRestoreRequest("a restore action's index is not a controller position 0-9")
        texts: dict[str, str] = {}
        for name in ("controller", "instance_id", "target", "why", "command"):
            value = data.get(name)
            if not isinstance(value, str) or not value:
                raise InvalidRestoreRequest(f"a restore action's {name} is missing or not a string")
            texts[name] = value[:_TEXT_LIMIT]
        if not _TARGET.match(texts["target"]):
            raise InvalidRestoreRequest("a restore action's target is not an SSM target")
        if kind == "reboot-node" and not INSTANCE_ID.match(texts["instance_id"]):
            raise InvalidRestoreRequest("a reboot-node action's instance_id is not an EC2 instance id")
        known: ActionKind = "hand-back" if kind == "hand-back" else "start-slurmctld"
        return cls(kind="reboot-node" if kind == "reboot-node" else known, index=index, **texts)


@dataclass(frozen=True)
class ClusterHolds:
    """What else works on the cluster now, besides the controllers' own state: the holder of
    the cluster's lease when it is not this restore (a drill, a run), a secret rotation's
    roll-out of slurmdbd.conf in progress, and the operator's silence in force."""

    holder: str | None = None  # "drill <execution>", "verification run <execution>"
    rollout: str | None = None  # "rotation of <secret> in progress"
    silenced: str | None = None  # "silenced until <time> by <arn>: <reason>" (hyperpod_ha.silences)


@dataclass(frozen=True)
class RestorePlan:
    """The actions to take now, those that would restore redundancy but are not taken (mode
    ``off``, the primary with ``standbys``, the hourly bound) and why, and what blocked every
    action (a guard), if one did."""

    mode: RestoreMode
    verdict: str
    active_controller: str | None
    actions: tuple[RestoreAction, ...] = ()
    not_taken: tuple[RestoreAction, ...] = ()
    blocked: str | None = None
    stopped: str | None = None  # the hourly bound was reached: restoring stopped
    reasons: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode.value,
            "verdict": self.verdict,
            "active_controller": self.active_controller,
            "actions": [action.to_json() for action in self.actions],
            "not_taken": [action.to_json() for action in self.not_taken],
            "blocked": self.blocked,
            "stopped": self.stopped,
            "reasons": list(self.reasons),
            "act": bool(self.actions),
        }
