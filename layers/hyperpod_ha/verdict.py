"""From every controller's report to one verdict, with reasons and the evidence per controller.

Verdicts (**contract**):

* ``HEALTHY``: the configured primary is active and every standby answers.
* ``FAILED_OVER``: a backup is active and serving, the configured primary is not active.
* ``DEGRADED``: one controller is active and serves, but something the cluster needs is not
  right (slurmdbd does not answer, StateSaveLocation is not writable, a standby is missing,
  controllers cannot reach each other, ...).
* ``SPLIT_BRAIN``: more than one controller acts as the active one.
* ``DOWN``: no controller is active and reachable.
* ``UNKNOWN``: no controller could be checked.

Who is active is NOT what ``scontrol ping`` says: its label is the configured position and a
standby answers UP too. A controller is taken as active when its slurmctld runs (not stopped),
its log last said ``Running as primary controller`` (or, with no log line found, the heartbeat
names it as the writer) and not every controller sees it DOWN. The heartbeat's writer index
says which controller last wrote it; a fresh beat from a controller nobody reaches is a
network partition, in which the backups never take over.

Slurm 24.11's standby logs why it does not take over (the heartbeat file cannot be read, is
still being updated, or does not exist yet): with no controller active, the verdict is DOWN
and that reason, in Slurm's words, comes first among its reasons; with one active, a standby
that would refuse makes the cluster DEGRADED.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from hyperpod_ha.health import (
    LIST_LIMIT,
    ControllerReport,
    ReportRejected,
    ReportStatus,
    controller_position,
)
from hyperpod_ha.slurm import TEXT_LIMIT, ControllerHost, excerpt


class VerdictName(StrEnum):
    HEALTHY = "HEALTHY"
    FAILED_OVER = "FAILED_OVER"
    DEGRADED = "DEGRADED"
    SPLIT_BRAIN = "SPLIT_BRAIN"
    DOWN = "DOWN"
    UNKNOWN = "UNKNOWN"


HEALTHY: Final = VerdictName.HEALTHY
FAILED_OVER: Final = VerdictName.FAILED_OVER
DEGRADED: Final = VerdictName.DEGRADED
SPLIT_BRAIN: Final = VerdictName.SPLIT_BRAIN
DOWN: Final = VerdictName.DOWN
UNKNOWN: Final = VerdictName.UNKNOWN
VERIFIED: Final = frozenset({HEALTHY, FAILED_OVER})

MAX_REASONS: Final = 24
MAX_REPORTS: Final = 32
# Slurm's default SlurmctldTimeout, used when no report says the configured one.
DEFAULT_SLURMCTLD_TIMEOUT: Final = 120


class VerdictInputError(ValueError):
    """The evaluation's input is not a list of reports. The reason is safe to log."""


@dataclass(frozen=True)
class VerdictPolicy:
    # A beat older than SlurmctldTimeout plus this is stale: by then a backup would take over.
    heartbeat_slack_seconds: int = 5
    default_slurmctld_timeout: int = DEFAULT_SLURMCTLD_TIMEOUT
    # File system types StateSaveLocation must be on (e.g. {"lustre"}); empty: no expectation.
    expected_state_fstypes: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Verdict:
    name: VerdictName
    reasons: tuple[str, ...]
    active_controller: str | None
    configured_primary: str | None
    evidence: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    attempt: int | None = None

    @property
    def verified(self) -> bool:
        return self.name in VERIFIED

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.name.value,
            "verified": self.verified,
            "reasons": list(self.reasons),
            "active_controller": self.active_controller,
            "configured_primary": self.configured_primary,
            "evidence": {key: dict(value) for key, value in self.evidence.items()},
            "attempt": self.attempt,
        }


def reports_from_json(items: object) -> list[ControllerReport]:
    """Reports as the workflow's Map returns them. An entry that is not a report (a caught
    error, a malformed object) becomes an unchecked report saying so, never a crash."""
    if not isinstance(items, list):
        raise VerdictInputError("reports is not a list")
    reports: list[ControllerReport] = []
    for position, item in enumerate(items[:MAX_REPORTS]):
        try:
            reports.append(ControllerReport.from_json(item))
        except ReportRejected as problem:
            reports.append(_unreadable(position, item, str(problem)))
    return reports


def _unreadable(position: int, item: object, problem: str) -> ControllerReport:
    instance_id = f"report-{position}"
    reason = f"report unreadable: {problem}"
    if isinstance(item, Mapping):
        if isinstance(item.get("instance_id"), str) and item["instance_id"]:
            instance_id = item["instance_id"][:TEXT_LIMIT]
        if isinstance(item.get("Error"), str):
            # Step Functions' Catch output: {"Error": <errorType>, "Cause": <JSON text>}
            reason = f"health check failed: {item['Error']}"
    return ControllerReport(instance_id=instance_id, status=ReportStatus.PROBE_FAILED, reason=excerpt(reason))


# --- evaluation -------------------------------------------------------------------------


@dataclass
class _Controller:
    """One controller as the evaluation sees it: configured position and its report, if any."""

    key: str
    index: int | None
    report: ControllerReport | None = None

    @property
    def checked(self) -> ControllerReport | None:
        return self.report if self.report is not None and self.report.checked else None


@dataclass(frozen=True)
class _Beat:
    """One controller's reading of the heartbeat file: who wrote it, how long ago."""

    writer: int
    age: int


class _Evaluation:
    def __init__(self, reports: Sequence[ControllerReport], policy: VerdictPolicy) -> None:
        self.reports = list(reports)
        self.policy = policy
        self.checked = [r for r in self.reports if r.checked]
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.hosts = self._configured_hosts()
        self.controllers, self.unmapped = self._map_reports()
        self.votes = self._ping_votes()
        timeout = next(
            (r.config.slurmctld_timeout for r in self.checked if r.config.slurmctld_timeout is not None),
            policy.default_slurmctld_timeout,
        )
        self.timeout = timeout
        self.beats = [
            _Beat(writer=r.heartbeat.writer_index, age=r.heartbeat.age_seconds)
            for r in self.checked
            if r.heartbeat.readable
            and r.heartbeat.writer_index is not None
            and r.heartbeat.age_seconds is not None
        ]
        freshest = min(self.beats, key=lambda beat: beat.age, default=None)
        self.last_beat = freshest
        self.fresh_beat = (
            freshest if freshest and freshest.age <= timeout + policy.heartbeat_slack_seconds else None
        )

    # -- who is who --

    def _configured_hosts(self) -> tuple[ControllerHost, ...]:
        configs = [r.config for r in self.checked if r.config.controllers]
        if not configs:
            return ()
        # slurmctld's own answer (scontrol show config) before a file read on one node.
        chosen = next((c for c in configs if c.source == "scontrol"), configs[0])
        hosts = chosen.controllers
        for config in configs:
            if [(h.name, h.address) for h in config.controllers] != [(h.name, h.address) for h in hosts]:
                self.problems.append("controllers disagree on the SlurmctldHost lines of their configuration")
                break
        locations = {c.state_save_location for c in configs if c.state_save_location}
        if len(locations) > 1:
            self.problems.append(f"controllers disagree on StateSaveLocation: {', '.join(sorted(locations))}")
        return hosts

    def _index_of(self, report: ControllerReport) -> int | None:
        if report.node.controller_index is not None:  # the node's own view, when its probe said
            return report.node.controller_index
        names = {n.lower() for n in (report.hostname, report.node.hostname) if n}
        names |= {n.split(".", 1)[0] for n in names}
        addresses = set(report.node.addresses) | ({report.private_ip} if report.private_ip else set())
        found = controller_position(self.hosts, names, addresses)
        return found.index if found else None

    def _map_reports(self) -> tuple[dict[int, _Controller], list[_Controller]]:
        controllers = {h.index: _Controller(key=h.name, index=h.index) for h in self.hosts}
        unmapped: list[_Controller] = []
        for report in self.reports:
            index = self._index_of(report)
            if index is None or index not in controllers:
                unmapped.append(
                    _Controller(key=report.hostname or report.instance_id, index=None, report=report)
                )
                continue
            slot = controllers[index]
            if slot.report is None or (report.checked and not slot.report.checked):
                slot.report = report  # a checked report beats one that says nothing
            elif report.checked:
                self.problems.append(
                    f"two checked nodes map to {slot.key}: {slot.report.instance_id}, {report.instance_id}"
                )
        return controllers, unmapped

    def _ping_votes(self) -> dict[int, list[tuple[int | None, bool]]]:
        votes: dict[int, list[tuple[int | None, bool]]] = {}
        for report in self.checked:
            reporter = self._index_of(report)
            for line in report.ping.lines:
                votes.setdefault(line.index, []).append((reporter, line.responding))
        return votes

    def name(self, index: int | None) -> str:
        if index is not None and index in self.controllers:
            return self.controllers[index].key
        return f"controller #{index}"

    def _label(self, report: ControllerReport) -> str:
        index = self._index_of(report)
        return (
            self.name(index)
            if index is not None and index in self.controllers
            else (report.hostname or report.instance_id)
        )

    def responding(self, index: int) -> bool | None:
        votes = self.votes.get(index)
        if not votes:
            return None
        return any(up for _, up in votes)

    def seen_by(self, reporter: int, index: int) -> bool | None:
        return next((up for who, up in self.votes.get(index, []) if who == reporter), None)

    # -- one controller's state --

    def claims_active(self, controller: _Controller) -> bool:
        report = controller.checked
        if report is None or report.slurmctld.running is not True:
            return False
        if report.role.logged == "primary":
            return True
        # No role line found (log elsewhere, rotated): the heartbeat's writer index decides.
        return (
            report.role.logged is None
            and controller.index is not None
            and self.fresh_beat is not None
            and self.fresh_beat.writer == controller.index
        )

    def hung(self, controller: _Controller) -> bool:
        report = controller.checked
        if report is None:
            return False
        if report.slurmctld.stopped:
            return True
        # A slurmctld that logged its start but no role yet does not answer ping for a while.
        return (
            report.slurmctld.running is True
            and report.role.logged != "starting"
            and controller.index is not None
            and self.responding(controller.index) is False
        )

    def active(self, controller: _Controller) -> bool:
        return self.claims_active(controller) and not self.hung(controller)

    def refusal(self, controller: _Controller) -> str | None:
        """A running standby's current reason for not taking over (Slurm 24.11 logs one
        every SlurmctldTimeout/3 s while it lasts, and a wait for the heartbeat every second):
        one older than SlurmctldTimeout plus the slack is over."""
        report = controller.checked
        if report is None or report.role.refusal is None or report.slurmctld.running is not True:
            return None
        age = report.role.refusal_age_seconds
        if age is not None and age > self.timeout + self.policy.heartbeat_slack_seconds:
            return None
        when = f" ({age} s ago)" if age is not None else ""
        if report.role.refusal == "waiting_for_heartbeat":
            return (
                f"{controller.key} waits for the heartbeat file to exist{when}: "
                "it cannot take over until it reads it"
            )
        return f"{controller.key} refuses to take over{when}: {report.role.refusal_message}"

    def describe(self, controller: _Controller) -> str:
        report = controller.report
        if report is None:
            return f"{controller.key}: no report"
        if not report.checked:
            return f"{controller.key}: {report.status.value.lower().replace('_', ' ')}: {report.reason}"
        parts = [_slurmctld_phrase(report)]
        if report.role.logged is not None:
            parts.append(_role_phrase(report))
        if controller.index is not None and (up := self.responding(controller.index)) is not None:
            parts.append("answers ping" if up else "does not answer ping")
        return f"{controller.key}: " + ", ".join(parts)

    def why_active(self, controller: _Controller) -> str:
        parts: list[str] = []
        report = controller.checked
        if report is not None and report.role.logged == "primary":
            parts.append(_role_phrase(report))
        if self.fresh_beat is not None and self.fresh_beat.writer == controller.index:
            parts.append(f"writes the heartbeat (last beat {self.fresh_beat.age} s ago)")
        if controller.index is not None and self.responding(controller.index):
            parts.append("answers ping")
        return ", ".join(parts) or "no direct evidence"

    # -- the verdict --

    def evaluate(self) -> tuple[VerdictName, list[str], list[_Controller]]:
        """The verdict, its reasons and the controllers taken as active."""
        if not self.checked:
            reasons = ["no controller could be checked"]
            reasons += [self.describe(c) for c in self._all() if c.report is not None]
            return UNKNOWN, reasons, []
        everyone = self._all()
        active = [c for c in everyone if self.active(c)]
        by_heartbeat = self._active_by_heartbeat()
        if by_heartbeat is not None and by_heartbeat not in active:
            active.append(by_heartbeat)
        if len(active) >= 2:
            reasons = [f"{len(active)} controllers act as the active one"]
            reasons += [f"{c.key} is active: {self.why_active(c)}" for c in active]
            fresh = self.timeout + self.policy.heartbeat_slack_seconds
            writers = sorted({b.writer for b in self.beats if b.age <= fresh})
            if len(writers) > 1:
                names = " and ".join(self.name(w) for w in writers)
                reasons.append(f"heartbeat written by {names} within moments")
            return SPLIT_BRAIN, reasons + self.problems, active
        if not active:
            return DOWN, self._down_reasons(everyone), []
        name, reasons = self._one_active(active[0])
        return name, reasons, active

    def _all(self) -> list[_Controller]:
        return [self.controllers[i] for i in sorted(self.controllers)] + self.unmapped

    def _active_by_heartbeat(self) -> _Controller | None:
        """A controller we could not check that writes the heartbeat and that others reach."""
        beat = self.fresh_beat
        if beat is None or beat.writer not in self.controllers:
            return None
        writer = self.controllers[beat.writer]
        if writer.checked is not None:
            return None  # its own report decides
        return writer if self.responding(beat.writer) is True else None

    def _down_reasons(self, everyone: list[_Controller]) -> list[str]:
        reasons = ["no controller is active"]
        # The standby's own words first: Slurm 24.11 says why it does not take over.
        reasons += [refused for c in everyone if (refused := self.refusal(c)) is not None]
        beat = self.fresh_beat
        if beat is not None and beat.writer in self.controllers:
            writer = self.controllers[beat.writer]
            if writer.checked is None:
                why = _why(writer.report)
                reasons.append(
                    f"{writer.key} writes the heartbeat (last beat {beat.age} s ago) but no checked "
                    f"controller reaches it ({why}): network partition? The backups do not take over "
                    "while its heartbeat stays fresh"
                )
            elif self.hung(writer):
                reasons.append(
                    f"{writer.key} still holds the heartbeat (last beat {beat.age} s ago) but its slurmctld "
                    f"does not answer: a backup takes over after SlurmctldTimeout ({self.timeout} s)"
                )
            else:
                reasons.append(
                    f"heartbeat written {beat.age} s ago by {writer.key}, which is not active: "
                    f"a backup takes over after SlurmctldTimeout ({self.timeout} s)"
                )
        elif self.last_beat is not None:
            reasons.append(
                f"nobody writes the heartbeat: last beat {self.last_beat.age} s ago "
                f"by {self.name(self.last_beat.writer)}"
            )
        else:
            reasons.append("the heartbeat could not be read on any controller")
        reasons += [self.describe(c) for c in everyone]
        return reasons + self.problems

    def _one_active(self, active: _Controller) -> tuple[VerdictName, list[str]]:
        index = active.index
        if index is None:
            self.problems.append(f"{active.key} acts as the active controller but is no SlurmctldHost line")
        if active.checked is None:
            self.problems.append(
                f"the active controller {active.key} could not be checked ({_why(active.report)})"
            )
        self._check_dbd(active)
        self._check_state_save()
        self._check_heartbeat(active)
        self._check_scheduler(active)
        self._check_others(active)
        for controller in self.unmapped:
            if controller is active:
                continue
            if controller.checked is not None:
                self.notes.append(f"{controller.key} is not one of the SlurmctldHost lines")
            else:
                # A check that gave nothing (and names no controller) may hide any of them.
                why = controller.report.reason if controller.report else "no report"
                self.problems.append(f"the check of {controller.key} gave no evidence: {why}")
        why = self.why_active(active)
        if self.problems:
            return DEGRADED, [f"{active.key} is active: {why}", *self.problems, *self.notes]
        if index == 0:
            return HEALTHY, [f"{active.key} (configured primary) is active: {why}", *self.notes]
        took_over = f"{active.key} (SlurmctldHost[{index}]) took over from {self.name(0)}: {why}"
        return FAILED_OVER, [took_over, *self.notes]

    def _check_dbd(self, active: _Controller) -> None:
        views = [(r, r.dbd) for r in self.checked]
        down = [(r, d) for r, d in views if d.reachable is False]
        if down:
            where = ", ".join(self._label(r) for r, _ in down)
            error = down[0][1].error or "no answer"
            queue = active.checked.dbd.agent_queue_size if active.checked else None
            queued = f"; {queue} accounting records wait in slurmctld's DBD agent queue" if queue else ""
            if len(down) == len([d for _, d in views if d.reachable is not None]):
                self.problems.append(f"slurmdbd does not answer: {error}{queued}")
            else:
                self.problems.append(f"slurmdbd does not answer from {where}: {error}")
        registered = next((d for r, d in views if d.reachable and r is active.checked), None) or next(
            (d for _, d in views if d.reachable), None
        )
        if registered is None:
            return
        if registered.registered_host is None:
            self.problems.append(
                registered.error or "no controller is registered with slurmdbd (ControlHost empty)"
            )
            return
        holder = self._controller_at(registered.registered_host)
        if holder is None:
            self.notes.append(f"slurmdbd has {registered.registered_host} registered as the controller")
        elif holder is not active:
            self.problems.append(
                f"slurmdbd has {holder.key} ({registered.registered_host}) registered as the controller, "
                f"but {active.key} is active"
            )

    def _controller_at(self, host: str) -> _Controller | None:
        for controller in self._all():
            if controller.index is not None:
                configured = self.hosts[controller.index] if controller.index < len(self.hosts) else None
                if configured and host in (configured.name, configured.address):
                    return controller
            report = controller.report
            if report is not None and (host == report.private_ip or host in report.node.addresses):
                return controller
        return None

    def _check_state_save(self) -> None:
        fstypes: dict[str, list[str]] = {}
        for report in self.checked:
            state = report.state_save
            who = self._label(report)
            if state.error:
                self.problems.append(f"{who}: {state.error}")
            elif state.exists is False:
                self.problems.append(f"{who}: StateSaveLocation {state.path} does not exist")
            elif state.effectively_writable is False:
                cause = f" ({state.write_error})" if state.write_error else ""
                self.problems.append(f"{who}: StateSaveLocation {state.path} is not writable{cause}")
            if state.fstype:
                fstypes.setdefault(state.fstype, []).append(who)
                expected = self.policy.expected_state_fstypes
                if expected and state.fstype not in expected:
                    self.problems.append(
                        f"{who}: StateSaveLocation is on {state.fstype}, "
                        f"expected {', '.join(sorted(expected))}"
                    )
        if len(fstypes) > 1:
            seen = "; ".join(f"{kind} on {', '.join(who)}" for kind, who in sorted(fstypes.items()))
            self.problems.append(f"controllers see StateSaveLocation on different file systems: {seen}")

    def _check_heartbeat(self, active: _Controller) -> None:
        for report in self.checked:
            if report.heartbeat.readable is False:
                self.problems.append(
                    f"{self._label(report)}: {report.heartbeat.error or 'heartbeat unreadable'}: "
                    "this controller could not take over"
                )
        if active.checked is None:
            return
        beat = self.fresh_beat
        if beat is None:
            if self.last_beat is not None:
                self.problems.append(
                    "the active controller does not write the heartbeat: "
                    f"last beat {self.last_beat.age} s ago by {self.name(self.last_beat.writer)}"
                )
        elif beat.writer != active.index:
            self.problems.append(
                f"heartbeat last written {beat.age} s ago by {self.name(beat.writer)}, "
                f"not by the active {active.key}"
            )

    def _check_scheduler(self, active: _Controller) -> None:
        for report in self.checked:
            if report.scheduler.answers is False:
                where = "the active controller" if report is active.checked else "a client on this controller"
                self.problems.append(
                    f"{self._label(report)}: {report.scheduler.error or 'sinfo failed'} "
                    f"({where} cannot reach the active slurmctld)"
                )
        source = active.checked or next((r for r in self.checked if r.scheduler.node_states), None)
        states = source.scheduler.node_states if source else ()
        total = sum(s.count for s in states)
        if total and all(not s.responding for s in states):
            listed = ", ".join(f"{s.count} {s.state}" for s in states)
            self.problems.append(f"no compute node responds to the active controller ({listed})")

    def _check_others(self, active: _Controller) -> None:
        for index in sorted(self.controllers):
            other = self.controllers[index]
            if other is active:
                continue
            old_primary = index == 0 and active.index != 0
            report = other.checked
            if report is None:
                self._unchecked_standby(other, old_primary)
                continue
            if active.index is not None and self.seen_by(index, active.index) is False:
                self.problems.append(
                    f"{other.key} cannot reach the active controller {active.key} (ping says DOWN)"
                )
            self._checked_standby(other, report, active, old_primary)

    def _checked_standby(
        self, other: _Controller, report: ControllerReport, active: _Controller, old_primary: bool
    ) -> None:
        if self.hung(other):
            what = "stopped" if report.slurmctld.stopped else "running but not answering"
            text = f"{other.key}: slurmctld {what} (process state {report.slurmctld.process_state or '?'})"
            if old_primary:
                self.notes.append(f"{text}: the old primary asks for control back when it answers again")
            else:
                self.problems.append(text)
        elif report.slurmctld.running is not True:
            if old_primary:
                self.notes.append(f"{other.key} (the configured primary): slurmctld not running")
            else:
                self.problems.append(f"standby {other.key}: slurmctld not running")
        elif report.role.logged not in (None, "standby"):
            # Starting, stopping or taking over while another controller is active: in flux.
            self.problems.append(f"{self.describe(other)} while {active.key} is active")
        elif (refused := self.refusal(other)) is not None:
            # It would not take over now: the failover the cluster counts on is not there.
            self.problems.append(refused)
        elif (
            other.index is not None
            and active.index is not None
            and self.seen_by(active.index, other.index) is False
        ):
            self.problems.append(f"standby {other.key} does not answer ping from {active.key}")
        else:
            self.notes.append(f"{self.describe(other)} (standby)")

    def _unchecked_standby(self, other: _Controller, old_primary: bool) -> None:
        why = _why(other.report)
        index = other.index
        up = self.responding(index) if index is not None else None
        if up:
            self.notes.append(f"{other.key} could not be checked ({why}) but answers ping")
        elif old_primary:
            self.notes.append(f"{other.key} (the configured primary) is not active: {why}")
        else:
            self.problems.append(f"standby {other.key} could not be checked ({why}) and does not answer ping")

    def evidence(self, active_keys: set[str]) -> dict[str, dict[str, Any]]:
        summary: dict[str, dict[str, Any]] = {}
        for controller in self._all()[:LIST_LIMIT]:
            report = controller.report
            entry: dict[str, Any] = {
                "position": controller.index,
                "instance_id": report.instance_id if report else None,
                "status": report.status.value if report else "NO_REPORT",
                "reason": report.reason if report else None,
                "active": controller.key in active_keys,
                "answers_ping": self.responding(controller.index) if controller.index is not None else None,
                "writes_heartbeat": (
                    self.fresh_beat.writer == controller.index
                    if self.fresh_beat and controller.index is not None
                    else None
                ),
            }
            checked = controller.checked
            if checked is not None:
                entry.update(
                    slurmctld=_slurmctld_state(checked),
                    logged_role=checked.role.logged,
                    takeover_refusal=checked.role.refusal,
                    slurmdbd_reachable=checked.dbd.reachable,
                    state_save_writable=checked.state_save.effectively_writable,
                    heartbeat_age_seconds=checked.heartbeat.age_seconds,
                    heartbeat_writer=self.name(checked.heartbeat.writer_index)
                    if checked.heartbeat.writer_index is not None
                    else None,
                    sinfo_answers=checked.scheduler.answers,
                )
            key = controller.key
            if key in summary and report is not None:
                key = f"{key} [{report.instance_id}]"
            summary[key[:TEXT_LIMIT]] = entry
        return summary


def _why(report: ControllerReport | None) -> str:
    """Why a controller was not checked, in a few words (the full reason is in its evidence)."""
    if report is None:
        return "no report"
    return (report.reason or report.status.value).split(":", 1)[0]


def _slurmctld_state(report: ControllerReport) -> str:
    daemon = report.slurmctld
    if daemon.running is True:
        return "running"
    if daemon.stopped:
        return "stopped"
    return "not running" if daemon.running is False else "unknown"


def _slurmctld_phrase(report: ControllerReport) -> str:
    state = _slurmctld_state(report)
    if state == "stopped":
        return f"slurmctld stopped (process state {report.slurmctld.process_state})"
    return f"slurmctld {state}"


_ROLE_PHRASES: Final = {
    "primary": "logged 'Running as primary controller'",
    "standby": "logged 'slurmctld running in background mode' (standby)",
    "taking_over": "logged that it is taking over",
    "stopping": "logged a terminate signal last",
    "starting": "logged a start but no role yet",
}


def _role_phrase(report: ControllerReport) -> str:
    phrase = _ROLE_PHRASES.get(report.role.logged or "", f"logged {report.role.logged}")
    age = report.role.line_age_seconds
    return f"{phrase} {age} s ago" if age is not None else phrase


def evaluate(
    reports: Sequence[ControllerReport], policy: VerdictPolicy | None = None, *, attempt: int | None = None
) -> Verdict:
    """One verdict from the controllers' reports."""
    evaluation = _Evaluation(reports[:MAX_REPORTS], policy or VerdictPolicy())
    name, reasons, active = evaluation.evaluate()
    return Verdict(
        name=name,
        reasons=tuple(excerpt(reason) for reason in _unique(reasons))[:MAX_REASONS],
        active_controller=active[0].key if len(active) == 1 else None,
        configured_primary=evaluation.hosts[0].name if evaluation.hosts else None,
        evidence=evaluation.evidence({c.key for c in active}),
        attempt=attempt,
    )


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
