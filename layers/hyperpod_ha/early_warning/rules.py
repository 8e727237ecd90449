"""Which warnings a check's figures give (pure): each threshold passed is a reason with its
stable code (**contract**: tests, lab checks and filters match the codes, never the text).

A warning's code is another kind of code than a verdict's reason
(:data:`hyperpod_ha.verdict.reasons.REASONS`): a reason with a severity makes the verdict
DEGRADED and may start what a verdict starts; a warning never changes the verdict, opens only
its own kind's incident (the watchdog's) and never a restore. So each kind has its one table:
every warning's code is one row of :data:`WARNINGS` (its kind, that kind's severity, what it
means), no code is in both tables, and docs/reasons.md lists both, written by ``make generate``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Final

from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.early_warning.figures import controller_figures
from hyperpod_ha.early_warning.models import (
    KIND_ACCOUNTING_AT_RISK,
    KIND_OVERLOADED,
    ControllerFigures,
    EarlyWarning,
    Judged,
)
from hyperpod_ha.early_warning.settings import WarningThresholds
from hyperpod_ha.human_time import duration


class WarningCode(StrEnum):
    SERVER_THREADS = "overloaded-server-threads"
    AGENT_QUEUE = "overloaded-agent-queue"
    RPC_AVERAGE = "overloaded-rpc-average"
    ROUND_TRIP = "overloaded-round-trip"
    DBD_QUEUE_GROWING = "accounting-queue-growing"
    DBD_QUEUE_HALF_FULL = "accounting-queue-half-full"


@dataclass(frozen=True)
class WarningKind:
    """One code's row: the warning it belongs to, its incident's severity (OpsCenter's scale,
    the kind's in :mod:`hyperpod_ha.topic_messages.kinds`) and what the code means."""

    code: WarningCode
    kind: str
    severity: int
    meaning: str


W = WarningCode
_ROWS: Final = (
    WarningKind(
        W.SERVER_THREADS, KIND_OVERLOADED, 3, "the active slurmctld's server threads at or past the threshold"
    ),
    WarningKind(
        W.AGENT_QUEUE, KIND_OVERLOADED, 3, "the active slurmctld's agent queue at or past the threshold"
    ),
    WarningKind(
        W.RPC_AVERAGE,
        KIND_OVERLOADED,
        3,
        "the RPCs' average time since the last check at or past the threshold",
    ),
    WarningKind(
        W.ROUND_TRIP,
        KIND_OVERLOADED,
        3,
        "sdiag's round trip to the active slurmctld at or past the threshold",
    ),
    WarningKind(
        W.DBD_QUEUE_GROWING,
        KIND_ACCOUNTING_AT_RISK,
        2,
        "slurmdbd away and the DBD agent queue full within the horizon at the rate seen",
    ),
    WarningKind(
        W.DBD_QUEUE_HALF_FULL,
        KIND_ACCOUNTING_AT_RISK,
        2,
        "slurmdbd away and the DBD agent queue growing, half full or more",
    ),
)
del W
WARNINGS: Final[Mapping[WarningCode, WarningKind]] = MappingProxyType({row.code: row for row in _ROWS})


def early_warnings(
    figures: Sequence[ControllerFigures], thresholds: WarningThresholds
) -> tuple[EarlyWarning, ...]:
    """The warnings on the active controller (``figures`` as :mod:`.figures` gives them)."""
    active = next((one for one in figures if one.active), None)
    if active is None:
        return ()
    found = [overloaded(active, thresholds), accounting_at_risk(active, thresholds)]
    return tuple(warning for warning in found if warning is not None)


def one_check_warnings(
    verdict: Judged, reports: Sequence[ControllerReport], thresholds: WarningThresholds
) -> tuple[EarlyWarning, ...]:
    """The warnings one check shows by itself (a verification run's: no sample before it).

    The same rules as the watchdog's, on the serving controller's sdiag in this check's reports.
    What needs two checks is left to the watchdog: the RPCs' average over a window
    (``overloaded-rpc-average``) and the DBD agent queue's rate (``accounting-at-risk``)."""
    figures, _ = controller_figures(verdict, reports, None)
    return early_warnings(figures, thresholds)


def overloaded(active: ControllerFigures, thresholds: WarningThresholds) -> EarlyWarning | None:
    past: list[tuple[WarningCode, str]] = []
    if active.server_threads is not None and active.server_threads >= thresholds.server_threads:
        past.append(
            (
                WarningCode.SERVER_THREADS,
                f"server threads {active.server_threads} ({thresholds.server_threads})",
            )
        )
    if active.agent_queue is not None and active.agent_queue >= thresholds.agent_queue:
        past.append((WarningCode.AGENT_QUEUE, f"agent queue {active.agent_queue} ({thresholds.agent_queue})"))
    # Since sdiag's reset the average says little about now: only over a window.
    average = active.rpc_average_ms if active.rpc_window_seconds else None
    if average is not None and average >= thresholds.rpc_average_ms:
        past.append(
            (WarningCode.RPC_AVERAGE, f"RPCs {average:.0f} ms on average ({thresholds.rpc_average_ms} ms)")
        )
    if active.round_trip_ms is not None and active.round_trip_ms >= thresholds.round_trip_ms:
        past.append(
            (
                WarningCode.ROUND_TRIP,
                f"sdiag answered in {active.round_trip_ms} ms ({thresholds.round_trip_ms} ms)",
            )
        )
    if not past:
        return None
    name = active.controller
    reasons = [f"{name} is slow but alive: {', '.join(what for _, what in past)} (thresholds in brackets)"]
    window = (
        f"over the last {duration(active.rpc_window_seconds)}"
        if active.rpc_window_seconds
        else "since sdiag's reset"
    )
    if active.slowest_types:
        reasons.append(
            f"slowest RPC types {window}: " + "; ".join(row.phrase() for row in active.slowest_types)
        )
    if active.busiest_users:
        reasons.append(f"busiest users {window}: " + "; ".join(row.phrase() for row in active.busiest_users))
    reasons.append(
        "Slurm's HA will not fail over a controller that still answers ping; a takeover would carry "
        "the same load to the backup: find the source (the types and users above)"
    )
    return EarlyWarning(
        kind=KIND_OVERLOADED,
        controller=name,
        headline=f"{name} is overloaded: {', '.join(what for _, what in past)}",
        reasons=tuple(reasons),
        codes=tuple(code.value for code, _ in past),
        figures=active,
    )


def time_to_loss(active: ControllerFigures) -> float | None:
    """Seconds until slurmctld drops records at the rate seen (it purges step records at
    MaxDBDMsgs - 1, then discards each new one); ``None`` unless the queue grows."""
    queue, limit, rate = active.dbd_agent_queue, active.max_dbd_msgs, active.dbd_queue_rate
    if queue is None or limit is None or rate is None or rate <= 0:
        return None
    return max(limit - 1 - queue, 0) / rate


def accounting_at_risk(active: ControllerFigures, thresholds: WarningThresholds) -> EarlyWarning | None:
    """slurmdbd or its database away while the DBD agent queue grows toward MaxDBDMsgs."""
    left = time_to_loss(active)
    queue, limit = active.dbd_agent_queue, active.max_dbd_msgs
    if active.slurmdbd_answers is not False or left is None or queue is None or limit is None:
        return None
    codes = []
    if left <= thresholds.horizon_seconds:
        codes.append(WarningCode.DBD_QUEUE_GROWING)
    if queue * 2 >= limit:
        codes.append(WarningCode.DBD_QUEUE_HALF_FULL)
    if not codes:
        return None
    name = active.controller
    when = "now" if left == 0 else f"in about {duration(left)}"
    queued = (
        f"{queue} accounting records queued in {name}'s slurmctld of MaxDBDMsgs {limit}, "
        f"growing {active.dbd_queue_rate:.1f} a second: records are dropped {when}"
    )
    return EarlyWarning(
        kind=KIND_ACCOUNTING_AT_RISK,
        controller=name,
        headline=f"accounting records will be lost {when} ({queue} of {limit} queued)",
        reasons=(
            f"slurmdbd or its database does not answer from {name}; {queued}",
            "do not fail over now: the queue lives in the active slurmctld's memory, a takeover loses it",
            f"bring slurmdbd or its database back: `systemctl status slurmdbd` and its log on {name}",
        ),
        codes=tuple(code.value for code in codes),
        figures=active,
    )
