"""The cluster's lease: one verification run, drill, restore or roll-out per cluster at a time.

The lease is one item of the state table (its key and its conditional writes are
``state_table``'s), written with a condition and with a TTL (``expires_at``) so that a lost
holder cannot block the cluster forever. A run holds it for its trigger, a drill for its
execution; a trigger arriving meanwhile joins the holder (``joined_count``, and the first
joined triggers' keys in ``joined``, for the run's evidence). A run waiting for HyperPod's
maintenance to end extends ``expires_at`` before each wait and says so in ``maintenance`` (the
workflow writes both, "Hold the cluster during the maintenance").

A run that finds a restore to do hands its lease to the restore before its snapshot (the
restore's item names it in ``handed_from``): the restore need not wait for the snapshot, and
one actor still holds the cluster.

This module is the lease as a value: what it holds, how its id follows from what asked for it
(so a redelivered trigger or a retried step never takes a second one), and its item's
attributes, read and written through boto3's own DynamoDB type (de)serializer. The stored
attributes are those of the deployed tables: a run's item has no ``kind`` and no
``execution_arn`` (its execution is of the verification state machine); a drill's and a
restore's (of redundancy, ``hyperpod_ha.restore``) have both. A roll-out of the database
secret's credentials (``hyperpod_ha.rotation``) is no execution: its item names the rotation
function as ``execution_arn`` and the invocation as ``execution_name``, and it expires when that
invocation must have ended (a crashed roll-out frees the cluster by itself).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, Final, Literal

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from hyperpod_ha.environment import Integer
from hyperpod_ha.errors import InputRejected
from hyperpod_ha.request_fields import MAX_TEXT_CHARS
from hyperpod_ha.trigger import Trigger

HolderKind = Literal["run", "drill", "restore", "rollout"]
HOLDER_KINDS: Final[frozenset[str]] = frozenset({"run", "drill", "restore", "rollout"})
# A holder that is its own execution (a run's is started after its lease is taken).
ExecutionKind = Literal["drill", "restore"]

# How long a holder keeps the cluster at most: the template's LeaseSeconds (runs and drills).
DEFAULT_LEASE_SECONDS: Final = 3600
LeaseSeconds = Annotated[int, Integer("LEASE_SECONDS", DEFAULT_LEASE_SECONDS, minimum=1)]

# What the code writes is an id, an ARN, a name or a trigger's key (its source and an id of at
# most MAX_ID_CHARS); a text of an item read back is bounded as any text from outside.
_MAX_CHARS: Final = MAX_TEXT_CHARS
_SERIALIZER: Final = TypeSerializer()
_DESERIALIZER: Final = TypeDeserializer()


class LeaseItemRejected(InputRejected):
    """A lease item in the state table that this code did not write (a missing, mistyped, empty
    or oversized attribute, an unknown holder kind), or a lease that could not be read back if
    written. Nothing is taken, joined or started on it."""


def lease_id_for_trigger(trigger: Trigger) -> str:
    """The same for every delivery of one trigger; an operator's request without an id is new
    each time."""
    if trigger.source == "operator" and not trigger.id:
        return uuid.uuid4().hex[:20]
    return hashlib.sha256(trigger.key.encode()).hexdigest()[:20]


def lease_id_for_drill(execution_arn: str) -> str:
    """The same for every step and retry of one drill execution (the abandoned-run clean-up
    finds it again from the ARN alone)."""
    return hashlib.sha256(f"drill\n{execution_arn}".encode()).hexdigest()[:20]


def lease_id_for_restore(execution_arn: str) -> str:
    """The same for every step and retry of one restore execution."""
    return hashlib.sha256(f"restore\n{execution_arn}".encode()).hexdigest()[:20]


def lease_id_for_rollout(key: str) -> str:
    """The same for every retry of one roll-out: ``key`` is the rotation's token (Secrets Manager
    retries a rotation with it) or the invocation's request id (Lambda's retries keep it)."""
    return hashlib.sha256(f"rollout\n{key}".encode()).hexdigest()[:20]


@dataclass(frozen=True)
class Lease:
    """The cluster's lease as its item holds it (times in epoch seconds)."""

    lease_id: str
    trigger: (
        str  # the holder's trigger key (``sns:<message id>``; ``drill:<lease id>``; ``restore:<lease id>``)
    )
    execution_name: str
    taken_at: int
    expires_at: int
    kind: HolderKind = "run"
    execution_arn: str = ""  # a drill's own execution; a run's follows from its name
    joined_count: int = 0
    joined: frozenset[str] = frozenset()
    maintenance: str = ""  # what a run waiting for maintenance saw last (the workflow's note)
    # A restore's: the execution name of the run that handed it the cluster before its snapshot.
    handed_from: str = ""

    @classmethod
    def for_run(cls, lease_id: str, trigger_key: str, execution_name: str, now: int, seconds: int) -> Lease:
        return cls(lease_id, trigger_key, execution_name, taken_at=now, expires_at=now + seconds)

    @classmethod
    def for_execution(
        cls, kind: ExecutionKind, lease_id: str, execution_arn: str, now: int, seconds: int
    ) -> Lease:
        """A drill's or a restore's lease, held by its own execution: trigger ``<kind>:<lease id>``."""
        return cls(
            lease_id,
            f"{kind}:{lease_id}",
            execution_arn.rsplit(":", 1)[-1],
            taken_at=now,
            expires_at=now + seconds,
            kind=kind,
            execution_arn=execution_arn,
        )

    @classmethod
    def for_rollout(
        cls, lease_id: str, function_arn: str, invocation: str, now: int, expires_at: int
    ) -> Lease:
        """A roll-out's lease, held by one invocation (``invocation``, its request id) of the
        rotation function (``function_arn``) until ``expires_at``: trigger ``rollout:<lease id>``."""
        return cls(
            lease_id,
            f"rollout:{lease_id}",
            invocation,
            taken_at=now,
            expires_at=expires_at,
            kind="rollout",
            execution_arn=function_arn,
        )

    def __post_init__(self) -> None:
        # What an item must hold to be read back (from_item): a lease that breaks it is never written.
        for name in ("lease_id", "trigger", "execution_name", "execution_arn", "maintenance", "handed_from"):
            value: str = getattr(self, name)
            if not value and name not in ("execution_arn", "maintenance", "handed_from"):
                raise LeaseItemRejected(f"the lease's {name} is empty")
            if len(value) > _MAX_CHARS:
                raise LeaseItemRejected(f"the lease's {name} is longer than {_MAX_CHARS} characters")
        if self.kind != "run" and not self.execution_arn:
            raise LeaseItemRejected(f"the {self.kind}'s lease names no execution_arn")
        if not all(key and len(key) <= _MAX_CHARS for key in self.joined):
            raise LeaseItemRejected(
                f"the lease's joined holds an empty key or one over {_MAX_CHARS} characters"
            )

    def expired(self, now: float) -> bool:
        """DynamoDB deletes expired items lazily: an expired lease is free, though still stored."""
        return self.expires_at < int(now)

    def to_item(self) -> dict[str, Any]:
        """The item's attributes but its key (``state_table`` writes them under the cluster's)."""
        plain: dict[str, object] = {
            "lease_id": self.lease_id,
            "trigger": self.trigger,
            "execution_name": self.execution_name,
            "taken_at": self.taken_at,
            "expires_at": self.expires_at,
            "joined_count": self.joined_count,
        }
        if self.kind != "run":
            plain["kind"] = self.kind
        if self.execution_arn:
            plain["execution_arn"] = self.execution_arn
        if self.joined:  # DynamoDB stores no empty set: joins ADD to it
            plain["joined"] = self.joined
        if self.maintenance:
            plain["maintenance"] = self.maintenance
        if self.handed_from:
            plain["handed_from"] = self.handed_from
        return {name: _SERIALIZER.serialize(value) for name, value in plain.items()}

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Lease:
        """The lease an item holds (its key, ``pk``, is not read); :class:`LeaseItemRejected`
        for an item this code did not write."""
        plain = _ItemValues(item)
        kind = plain.text("kind", required=False) or "run"
        if kind not in HOLDER_KINDS:
            raise LeaseItemRejected("the lease item's kind is not a run, a drill, a restore or a roll-out")
        return cls(
            lease_id=plain.text("lease_id"),
            trigger=plain.text("trigger"),
            execution_name=plain.text("execution_name"),
            taken_at=plain.whole("taken_at"),
            expires_at=plain.whole("expires_at"),
            kind=_holder_kind(kind),
            execution_arn=plain.text("execution_arn", required=False),
            joined_count=plain.whole("joined_count", default=0),
            joined=plain.texts("joined"),
            maintenance=plain.text("maintenance", required=False),
            handed_from=plain.text("handed_from", required=False),
        )


def _holder_kind(kind: str) -> HolderKind:
    for known in ("drill", "restore", "rollout"):
        if kind == known:
            return known
    return "run"


class _ItemValues:
    """An item's attributes read one by one, each checked for its type (the lease checks the rest)."""

    def __init__(self, item: Mapping[str, Any]) -> None:
        self._item = item

    def _value(self, name: str) -> object:
        raw = self._item.get(name)
        if raw is None:
            return None
        try:
            return _DESERIALIZER.deserialize(raw)
        except (TypeError, AttributeError, ValueError, ArithmeticError):
            raise LeaseItemRejected(f"the lease item's {name} is not a DynamoDB value") from None

    def text(self, name: str, *, required: bool = True) -> str:
        value = self._value(name)
        if value is None and not required:
            return ""
        if not isinstance(value, str):
            raise LeaseItemRejected(f"the lease item's {name} is not a string")
        return value

    def whole(self, name: str, default: int | None = None) -> int:
        value = self._value(name)
        if value is None and default is not None:
            return default
        if not isinstance(value, Decimal) or not value.is_finite() or value != value.to_integral_value():
            raise LeaseItemRejected(f"the lease item's {name} is not a whole number")
        return int(value)

    def texts(self, name: str) -> frozenset[str]:
        value = self._value(name)
        if value is None:
            return frozenset()
        if not isinstance(value, set) or not all(isinstance(key, str) for key in value):
            raise LeaseItemRejected(f"the lease item's {name} is not a set of trigger keys")
        return frozenset(value)
