"""The state machines' "Check the settings": one table of the request's fields and bounds.

Step Functions has no include, so each definition keeps its own Choice state; both are written
from the table below by ``make generate`` and a test fails when a definition differs.
A request that fails the check ends in "Reject the settings" (``InvalidRequest``, the cause
below) before anything is checked or a lease is touched.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

CHECK, REJECT = "Check the settings", "Reject the settings"


@dataclass(frozen=True)
class Field:
    """A field of ``$.request``: its JSON type and, for numbers, its inclusive bounds."""

    name: str
    kind: str  # "boolean", "string", "optional string" (absent, or a string), "number", "one of"
    minimum: int | None = None
    maximum: int | None = None
    values: tuple[str, ...] = ()  # "one of": the strings allowed

    def rule(self) -> dict[str, Any]:
        variable = f"$.request.{self.name}"
        if self.kind == "boolean":
            return {"Variable": variable, "IsBoolean": True}
        if self.kind == "string":
            return {"Variable": variable, "IsString": True}
        if self.kind == "one of" and self.values:
            return {"Or": [{"Variable": variable, "StringEquals": value} for value in self.values]}
        if self.kind == "optional string":
            absent = {"Not": {"Variable": variable, "IsPresent": True}}
            return {"Or": [absent, {"Variable": variable, "IsString": True}]}
        if self.kind == "number" and self.minimum is not None and self.maximum is not None:
            return {
                "And": [
                    {"Variable": variable, "IsNumeric": True},
                    {"Variable": variable, "NumericGreaterThanEquals": self.minimum},
                    {"Variable": variable, "NumericLessThanEquals": self.maximum},
                ]
            }
        raise ValueError(f"field {self.name}: kind {self.kind!r} with bounds {self.minimum}, {self.maximum}")


def flag(name: str) -> Field:
    return Field(name, "boolean")


def text(name: str) -> Field:
    return Field(name, "string")


def number(name: str, minimum: int, maximum: int) -> Field:
    return Field(name, "number", minimum, maximum)


@dataclass(frozen=True)
class SettingsCheck:
    definition: str  # under statemachine/
    fields: tuple[Field, ...]
    next_state: str
    cause: str  # what the rejected request is told (docs/how-it-works.md's Input table says the same)

    def states(self) -> dict[str, dict[str, Any]]:
        choice = {"And": [field.rule() for field in self.fields], "Next": self.next_state}
        return {
            CHECK: {"Type": "Choice", "Choices": [choice], "Default": REJECT},
            REJECT: {"Type": "Fail", "Error": "InvalidRequest", "Cause": self.cause},
        }

    def written(self, definition: str) -> str:
        """``definition`` (the ASL file's text) with both states as this table says."""
        machine = json.loads(definition)
        missing = {CHECK, REJECT} - set(machine["States"])
        if missing:
            raise ValueError(f"{self.definition} has no state {sorted(missing)}")
        machine["States"].update(self.states())
        return json.dumps(machine, indent=2, ensure_ascii=False) + "\n"


VERIFICATION = SettingsCheck(
    "failover_verification.asl.json",
    (
        flag("dry_run"),
        text("reason"),
        text("lease_id"),
        number("settle_seconds", 0, 3600),
        number("max_attempts", 1, 100),
        number("backoff_seconds", 0, 3600),
        number("margin_seconds", 0, 3600),
        number("deadline_seconds", 60, 86400),
        number("snapshot_poll_seconds", 0, 600),
        number("snapshot_max_polls", 1, 1000),
        # verdict.maintenance checks the same bounds (MAX_WAIT_MINUTES, *_POLL_SECONDS, MAX_LEASE_SECONDS).
        number("maintenance_wait_minutes", 0, 1440),
        number("maintenance_poll_seconds", 10, 3600),
        number("lease_seconds", 60, 86400),
        Field("trigger.time", "optional string"),
        Field("restore_redundancy", "one of", values=("off", "standbys", "all")),
    ),
    "Let the controllers settle",
    "dry_run must be a boolean, reason and lease_id strings, settle_seconds 0-3600, max_attempts 1-100, "
    "backoff_seconds 0-3600, margin_seconds 0-3600, deadline_seconds 60-86400, snapshot_poll_seconds 0-600, "
    "snapshot_max_polls 1-1000, maintenance_wait_minutes 0-1440, maintenance_poll_seconds 10-3600, "
    "lease_seconds 60-86400, trigger.time a string (empty, or an ISO 8601 time), restore_redundancy "
    "off, standbys or all.",
)
DRILL = SettingsCheck(
    "failover_drill.asl.json",
    (
        text("to"),
        flag("hand_back"),
        flag("dry_run"),
        number("poll_seconds", 0, 600),
        number("max_checks", 1, 60),
        number("test_job_checks", 1, 60),
    ),
    "Take the cluster's lease",
    "to must be a string, hand_back and dry_run booleans, poll_seconds 0-600, max_checks and "
    "test_job_checks 1-60.",
)
RESTORE = SettingsCheck(
    "redundancy_restore.asl.json",
    (
        Field("mode", "one of", values=("off", "standbys", "all")),
        flag("dry_run"),
        text("reason"),
        number("wait_seconds", 0, 600),
        # hyperpod_ha.restore.steps.MAX_CHECKS
        number("max_checks", 1, 30),
        number("reboot_wait_seconds", 0, 1800),
    ),
    "Take the cluster's lease",
    "mode must be off, standbys or all, dry_run a boolean, reason a string, wait_seconds 0-600, "
    "max_checks 1-30, reboot_wait_seconds 0-1800.",
)
SETTINGS_CHECKS = (VERIFICATION, DRILL, RESTORE)
