"""The cluster as the controllers' reports show it, built once for the rules to read.

Each SlurmctldHost line with the report of the node at that position, the reports that name
no position, who sees whom answer ``scontrol ping``, and each controller's reading of the
heartbeat file. What the reports disagree on is kept as ``conflicts``; how the controllers'
own configurations differ is :mod:`.drift`'s to tell."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from hyperpod_ha.controllers.evidence import controller_position
from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.slurm import ControllerHost
from hyperpod_ha.verdict.reasons import Reason, ReasonCode
from hyperpod_ha.verdict.settings import VerdictPolicy

# Who answered ping in whose eyes: controller position -> [(reporter's position, answers)].
Votes = Mapping[int, Sequence[tuple[int | None, bool]]]


@dataclass(frozen=True, eq=False)  # compared by identity: two unmapped reports may look alike
class ObservedController:
    """One controller as the evaluation sees it: configured position and its report, if any."""

    key: str
    index: int | None
    report: ControllerReport | None = None

    @property
    def checked(self) -> ControllerReport | None:
        return self.report if self.report is not None and self.report.checked else None


@dataclass(frozen=True)
class Beat:
    """One controller's reading of the heartbeat file: who wrote it, how long ago."""

    writer: int
    age: int


@dataclass
class Findings:
    """What a rule finds: problems make a serving cluster DEGRADED, notes only explain."""

    problems: list[Reason] = field(default_factory=list)
    notes: list[Reason] = field(default_factory=list)

    def problem(self, code: ReasonCode, text: str) -> None:
        self.problems.append(Reason(code, text))

    def note(self, code: ReasonCode, text: str) -> None:
        self.notes.append(Reason(code, text))

    def extend(self, other: Findings) -> None:
        self.problems += other.problems
        self.notes += other.notes


@dataclass(frozen=True)
class Observation:
    policy: VerdictPolicy
    reports: tuple[ControllerReport, ...]
    checked: tuple[ControllerReport, ...]
    hosts: tuple[ControllerHost, ...]
    controllers: Mapping[int, ObservedController]
    unmapped: tuple[ObservedController, ...]
    votes: Votes
    timeout: int  # SlurmctldTimeout, as configured or Slurm's default
    beats: tuple[Beat, ...]
    last_beat: Beat | None
    fresh_beat: Beat | None  # the last beat, if no backup would have taken over since
    conflicts: tuple[Reason, ...]
    # DescribeCluster's Orchestrator.Slurm.SlurmConfigStrategy: HyperPod's agent writes slurm.conf.
    config_strategy: str | None = None

    @property
    def everyone(self) -> list[ObservedController]:
        return [self.controllers[i] for i in sorted(self.controllers)] + list(self.unmapped)

    @property
    def fresh_seconds(self) -> int:
        """The age up to which a heartbeat or a logged refusal still holds."""
        return self.timeout + self.policy.heartbeat_slack_seconds

    def index_of(self, report: ControllerReport) -> int | None:
        return _index_of(self.hosts, report)

    def name(self, index: int | None) -> str:
        if index is not None and index in self.controllers:
            return self.controllers[index].key
        return f"controller #{index}"

    def label(self, report: ControllerReport) -> str:
        index = self.index_of(report)
        if index is not None and index in self.controllers:
            return self.name(index)
        return report.hostname or report.instance_id

    def responding(self, index: int) -> bool | None:
        votes = self.votes.get(index)
        if not votes:
            return None
        return any(up for _, up in votes)

    def seen_by(self, reporter: int, index: int) -> bool | None:
        return next((up for who, up in self.votes.get(index, []) if who == reporter), None)


def configured_timeout(reports: Iterable[ControllerReport]) -> int | None:
    """SlurmctldTimeout as the checked controllers' running configuration says it."""
    return next(
        (r.config.slurmctld_timeout for r in reports if r.checked and r.config.slurmctld_timeout is not None),
        None,
    )


def observe(
    reports: Sequence[ControllerReport], policy: VerdictPolicy, config_strategy: str | None = None
) -> Observation:
    checked = tuple(r for r in reports if r.checked)
    conflicts: list[Reason] = []
    hosts = _configured_hosts(checked)
    controllers, unmapped = _map_reports(reports, hosts, conflicts)
    timeout = configured_timeout(checked)
    timeout = policy.default_slurmctld_timeout if timeout is None else timeout
    beats = tuple(
        Beat(writer=r.heartbeat.writer_index, age=r.heartbeat.age_seconds)
        for r in checked
        if r.heartbeat.readable
        and r.heartbeat.writer_index is not None
        and r.heartbeat.age_seconds is not None
    )
    last = min(beats, key=lambda beat: beat.age, default=None)
    return Observation(
        policy=policy,
        reports=tuple(reports),
        checked=checked,
        hosts=hosts,
        controllers=controllers,
        unmapped=unmapped,
        votes=_ping_votes(checked, hosts),
        timeout=timeout,
        beats=beats,
        last_beat=last,
        fresh_beat=last if last and last.age <= timeout + policy.heartbeat_slack_seconds else None,
        conflicts=tuple(conflicts),
        config_strategy=config_strategy,
    )


def _configured_hosts(checked: Sequence[ControllerReport]) -> tuple[ControllerHost, ...]:
    # Where each controller's own slurm.conf disagrees is drift (verdict.drift), told per controller.
    configs = [r.config for r in checked if r.config.controllers]
    if not configs:
        return ()
    # slurmctld's own answer (scontrol show config) before a file read on one node.
    return next((c for c in configs if c.source == "scontrol"), configs[0]).controllers


def _index_of(hosts: Sequence[ControllerHost], report: ControllerReport) -> int | None:
    if report.node.controller_index is not None:  # the node's own view, when its probe said
        return report.node.controller_index
    names = {n.lower() for n in (report.hostname, report.node.hostname) if n}
    names |= {n.split(".", 1)[0] for n in names}
    addresses = set(report.node.addresses) | ({report.private_ip} if report.private_ip else set())
    found = controller_position(hosts, names, addresses)
    return found.index if found else None


def _map_reports(
    reports: Sequence[ControllerReport], hosts: Sequence[ControllerHost], conflicts: list[Reason]
) -> tuple[dict[int, ObservedController], tuple[ObservedController, ...]]:
    names = {h.index: h.name for h in hosts}
    slots: dict[int, ControllerReport | None] = dict.fromkeys(names)
    unmapped: list[ObservedController] = []
    for report in reports:
        index = _index_of(hosts, report)
        if index is None or index not in slots:
            unmapped.append(
                ObservedController(key=report.hostname or report.instance_id, index=None, report=report)
            )
            continue
        held = slots[index]
        if held is None or (report.checked and not held.checked):
            slots[index] = report  # a checked report beats one that says nothing
        elif report.checked:
            conflicts.append(
                Reason(
                    ReasonCode.TWO_NODES_ONE_CONTROLLER,
                    f"two checked nodes map to {names[index]}: {held.instance_id}, {report.instance_id}",
                )
            )
    controllers = {
        index: ObservedController(key=names[index], index=index, report=report)
        for index, report in slots.items()
    }
    return controllers, tuple(unmapped)


def _ping_votes(checked: Sequence[ControllerReport], hosts: Sequence[ControllerHost]) -> Votes:
    votes: dict[int, list[tuple[int | None, bool]]] = {}
    for report in checked:
        reporter = _index_of(hosts, report)
        for line in report.ping.lines:
            votes.setdefault(line.index, []).append((reporter, line.responding))
    return votes
