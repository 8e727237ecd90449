"""The parts message bodies share: aligned facts, what triggered a run and when, the controllers
by name, instance id and address, every reason, and the next steps (a shell on each controller,
what to look at, the runbook command, the console links).

Every time a person reads is an age and a UTC minute (``1 d 20 h ago (2026-11-29 23:30 UTC)``,
:mod:`hyperpod_ha.human_time`); JSON elsewhere keeps seconds. Every field taken from a request
is bounded here (:func:`~hyperpod_ha.request_fields.bounded_text`) before it is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hyperpod_ha.human_time import ago_at, iso_utc, parse_utc
from hyperpod_ha.request_fields import MAX_ID_CHARS, bounded_text
from hyperpod_ha.topic_messages.form import Cuttable
from hyperpod_ha.trigger import Trigger

# A cluster has a handful of controllers; evidence with more entries lists the first ones.
MAX_CONTROLLERS: Final = 16
_NAME_LIMIT: Final = 128
HYPERPOD_TARGET_PREFIX: Final = "sagemaker-cluster:"


def _text(value: object, limit: int = _NAME_LIMIT) -> str | None:
    return bounded_text(value.strip(), limit) if isinstance(value, str) and value.strip() else None


@dataclass(frozen=True)
class RunStart:
    """How a run began, as its messages tell it: its trigger, its own start and its reason."""

    trigger: Trigger
    started_at: float | None = None
    reason: str = ""

    @classmethod
    def from_json(cls, trigger: object, started_at: object = None, reason: object = None) -> RunStart | None:
        """A run input's ``trigger`` (each field bounded), start and reason; ``None`` when there is
        no trigger (a direct request)."""
        found = Trigger.from_json(trigger)
        if found is None:
            return None
        return cls(found, parse_utc(started_at), _text(reason, 512) or "")

    def to_event(self) -> dict[str, Any]:
        """The request fields :meth:`from_json` reads back: ``trigger``, ``started_at``, ``run_reason``."""
        trigger = self.trigger
        return {
            "trigger": {"source": trigger.source, "id": trigger.id, "time": trigger.time},
            "started_at": iso_utc(self.started_at),
            "run_reason": self.reason,
        }

    def describe(self, now: float) -> str:
        """``the watchdog's scheduled check (tick-1), 3 min ago (2026-12-01 10:01 UTC)``."""
        return self.trigger.describe(now, self.started_at)


@dataclass(frozen=True)
class ControllerLine:
    """A controller as a message names it."""

    name: str
    instance_id: str | None = None
    address: str | None = None
    target: str | None = None
    state: str = ""
    log_file: str | None = None
    state_dir: str | None = None

    @property
    def session_target(self) -> str | None:
        """What ``aws ssm start-session --target`` takes: HyperPod's target, else the instance id."""
        if self.target and self.target.startswith(HYPERPOD_TARGET_PREFIX):
            return self.target
        return self.instance_id or self.target


def controllers_of(evidence: Mapping[str, Any]) -> tuple[ControllerLine, ...]:
    """Each evidence entry that is a controller (it has an ``instance_id``), keyed by its name."""
    found = []
    for key, entry in list(evidence.items())[:MAX_CONTROLLERS]:
        if not isinstance(entry, Mapping) or not _text(entry.get("instance_id")):
            continue
        name = _text(entry.get("name")) or _text(entry.get("hostname")) or _text(key) or "?"
        found.append(
            ControllerLine(
                name=name,
                instance_id=_text(entry.get("instance_id")),
                address=_text(entry.get("address")) or _text(entry.get("private_ip")),
                target=_text(entry.get("target"), MAX_ID_CHARS),
                state=_state(entry),
                log_file=_text(entry.get("slurmctld_log"), 512),
                state_dir=_text(entry.get("state_save_location"), 512),
            )
        )
    return tuple(found)


def _state(entry: Mapping[str, Any]) -> str:
    """A verdict's evidence entry in a few words: active or not, slurmctld, ping."""
    status = entry.get("status")
    if isinstance(status, str) and status not in ("CHECKED", ""):
        why = _text(entry.get("reason"), 200)
        return status.lower().replace("_", " ") + (f": {why}" if why else "")
    parts = []
    if isinstance(entry.get("active"), bool):
        parts.append("active" if entry["active"] else "not active")
    if _text(entry.get("slurmctld")):
        parts.append(f"slurmctld {entry['slurmctld']}")
    if isinstance(entry.get("answers_ping"), bool):
        parts.append("answers ping" if entry["answers_ping"] else "does not answer ping")
    if entry.get("slurmdbd_reachable") is False:
        parts.append("slurmdbd does not answer")
    return ", ".join(parts)


def facts(rows: Sequence[tuple[str, str | None]]) -> list[str]:
    """``Label:  value`` lines, aligned; rows without a value are left out."""
    shown = [(label, value) for label, value in rows if value]
    width = max((len(label) for label, _ in shown), default=0) + 2
    return [f"{label + ':':<{width}}{value}" for label, value in shown]


def controller_lines(controllers: Sequence[ControllerLine]) -> list[str]:
    """``  ctl1  i-0abc...  10.1.0.11  active, slurmctld running`` per controller."""
    if not controllers:
        return ["Controllers: not known (no controller was checked)"]
    rows = [(c.name, c.instance_id or "-", c.address or "-", c.state) for c in controllers]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["Controllers:"]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append(("  " + "  ".join(cells) + ("  " + row[3] if row[3] else "")).rstrip())
    return lines


def reason_lines(title: str, reasons: Sequence[str], left_off: int = 0) -> list[str | Cuttable]:
    """Every reason, as a list that is cut only at its end (and says how many it left off)."""
    items = tuple(f"  - {reason}" for reason in reasons) or ("  - (no reason given)",)
    note = "  … {count} more (the OpsItem and the run's history hold every one)"
    if left_off:
        items += (f"  … {left_off} more (the run's history holds every one)",)
    return [title, Cuttable(items, note)]


def on_call_command(command: str, cluster: str, region: str, stack_name: str | None, *extra: str) -> str:
    """``hyperpod-ha <command>`` as a message prints it: complete (cluster, stack, region), so it
    acts on this stack as written from any directory, whatever the reader's own configuration.
    ``stack_name`` is the template's ``AWS::StackName`` (``STACK_NAME``); ``None`` only outside
    a deployed function (a test's or a sample's message), and then the option is left out."""
    stack = ("--stack-name", stack_name) if stack_name else ()
    return " ".join(("hyperpod-ha", command, "--cluster", cluster, *stack, "--region", region, *extra))


def next_steps(
    cluster: str,
    region: str,
    controllers: Sequence[ControllerLine],
    look_at: Sequence[str],
    links: Sequence[tuple[str, str | None]],
    *,
    diagnose: bool = True,
    stack_name: str | None = None,
) -> list[str]:
    """Numbered steps. ``diagnose`` (a problem): a shell on each controller, what to look at
    (``look_at``, the slurmctld log, the state directory) and the runbook command (complete:
    :func:`on_call_command`); then the links."""
    steps: list[list[str]] = []
    looks = list(look_at)
    if diagnose:
        shells = [
            f"     {c.name}: aws ssm start-session --region {region} --target {c.session_target}"
            for c in controllers
            if c.session_target
        ]
        if shells:
            steps.append(["Open a shell on a controller:", *shells])
        logs = ", ".join(sorted({c.log_file for c in controllers if c.log_file}))
        dirs = ", ".join(sorted({c.state_dir for c in controllers if c.state_dir}))
        looks.append(f"each controller's slurmctld log ({logs or 'SlurmctldLogFile in slurm.conf'})")
        looks.append(f"the state directory ({dirs or 'StateSaveLocation in slurm.conf'})")
    if looks:
        steps.append(["Look at:", *(f"     - {item}" for item in looks)])
    if diagnose:
        runbook = on_call_command("runbook start", cluster, region, stack_name, "--follow")
        steps.append([f"Check again once fixed: {runbook}"])
    shown = [(label, url) for label, url in links if url]
    if shown:
        steps.append(["Console:", *(f"     {label}: {url}" for label, url in shown)])
    lines = ["Next steps:"]
    for number, (first, *rest) in enumerate(steps, start=1):
        lines += [f"  {number}. {first}", *rest]
    return lines


def when(epoch: float | None, now: float) -> str | None:
    """``3 min ago (2026-12-01 10:01 UTC)``, or ``None`` when not known."""
    return ago_at(epoch, now) if epoch is not None else None
