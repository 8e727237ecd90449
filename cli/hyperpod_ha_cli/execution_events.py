"""What a verification's Step Functions history says to an operator, event by event.

Shared by the simulation's timeline and ``hyperpod-ha runbook start --follow``: a probe's
report names its controller (name, instance id, address), a verdict comes with every reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hyperpod_ha.human_time import duration

PROBE_STATE = "Run the probe on the controller"
VERDICT_STATE = "Decide the verdict"
SNAPSHOT_STATES = ("Snapshot the Slurm state", "Check the snapshot", "Record that the snapshot failed")
INCIDENT_STATES = (
    "Open an incident",
    "Report that verification could not complete",
    "Resolve open incidents",
)


@dataclass(frozen=True)
class ExitLine:
    """One state's result: ``what`` (probe report, verdict, ...), its detail, the verdict's reasons."""

    what: str
    detail: str
    reasons: tuple[str, ...] = ()
    verdict: Mapping[str, Any] | None = field(default=None)


def after(value: Any) -> str:
    """A measured figure: ``after 7.3 s``, or ``not reached``."""
    return f"after {duration(float(value))}" if isinstance(value, int | float) else "not reached"


def controller_label(name: Any, instance_id: Any = None, address: Any = None) -> str:
    """``ctl1 (i-0a1b2c3d4e5f60001, 10.214.0.11)``, with what is known."""
    parts = [str(part) for part in (instance_id, address) if part and part != name]
    head = str(name) if name else (parts.pop(0) if parts else "?")
    return f"{head} ({', '.join(parts)})" if parts else head


def exit_line(name: str, output: Any) -> ExitLine | None:
    """The line for a state that just exited with ``output``; None when it says nothing new."""
    if not isinstance(output, dict):
        return None
    if name == PROBE_STATE:
        label = controller_label(output.get("hostname"), output.get("instance_id"), output.get("private_ip"))
        detail = f"{label}: {output.get('status')}"
        return ExitLine("probe report", detail + (f" ({output['reason']})" if output.get("reason") else ""))
    if name == VERDICT_STATE and output.get("verdict"):
        value = output["verdict"].get("value") or {}
        reasons = tuple(str(r) for r in value.get("reasons") or [])
        return ExitLine("verdict", f"{value.get('verdict')} ({value.get('next', '')})", reasons, value)
    if name in SNAPSHOT_STATES:
        snap = (output.get("snapshot") or {}).get("value") or {}
        return ExitLine("snapshot", f"{snap.get('kind')} {snap.get('id')} {snap.get('status')}")
    if name in INCIDENT_STATES:
        incident = (output.get("incident") or {}).get("value") or {}
        detail = (
            incident.get("ops_item_id") or ", ".join(incident.get("resolved", [])) or "nothing to resolve"
        )
        return ExitLine("incident", str(detail))
    return None
