"""The watchdog's recovery: after a failure it found, the first verified tick starts the run whose
verdict resolves the incident, and only then forgets the failure. A tick that joins a run still
going keeps the memory: that run was started before the recovery and may yet end on the failure
(and open the incident then), so the next verified tick starts one more."""

from __future__ import annotations

from dataclasses import dataclass, field

from hyperpod_ha.controllers.models import ClusterControllers, Controller, ControllerReport
from hyperpod_ha.runs.models import Outcome, RunDecision
from hyperpod_ha.trigger import Trigger
from hyperpod_ha.watchdog.scheduled_check import Watchdog
from hyperpod_ha.watchdog.tick import Tick
from tests.unit.verdict.cases.verdict_probes import STANDBY, Probe, node

NOW = 1_795_995_200.0
PRIMARY = Probe()


@dataclass
class Runs:
    """Each start_or_join answered with the next outcome given."""

    outcomes: list[Outcome]
    asked: list[str] = field(default_factory=list)

    def start_or_join(self, cluster: str, trigger: Trigger, reason: str) -> RunDecision:
        self.asked.append(reason)
        return RunDecision(self.outcomes.pop(0), f"arn:aws:states:::execution:verify:{trigger.id}", "l1")


@dataclass
class Found:
    """The watchdog's memory, in memory: it found the cluster not verified."""

    clusters: set[str] = field(default_factory=lambda: {"ml-cluster"})

    def pending(self, cluster: str) -> bool:
        return cluster in self.clusters

    def forget(self, cluster: str) -> None:
        self.clusters.discard(cluster)


def watchdog(runs: Runs, found: Found) -> Watchdog:
    probes = (PRIMARY, STANDBY)
    reports = {r.instance_id: r for r in (p.report() for p in probes)}
    cluster = ClusterControllers(
        "ml-cluster",
        "arn:aws:sagemaker:us-east-1:123456789012:cluster/abc123def456",
        "abc123def456",
        "InService",
        tuple(node(p.name) for p in probes),
    )

    def check(controller: Controller) -> ControllerReport:
        return reports[controller.instance_id]

    return Watchdog("ml-cluster", lambda: cluster, check, runs, found, lambda: NOW)  # type: ignore[arg-type]


def test_a_recovery_tick_that_starts_the_run_forgets_the_failure() -> None:
    runs, found = Runs(["started"]), Found()
    result = watchdog(runs, found).tick(Tick("t1", "2026-12-04T10:00:00Z"))
    assert (result.outcome, result.verdict.name.value, result.recovery) == ("started", "HEALTHY", True)
    assert not found.clusters
    # Forgotten: the next verified tick starts nothing.
    assert watchdog(runs, found).tick(Tick("t2", "2026-12-04T10:01:00Z")).outcome == "verified"
    assert runs.asked == ["watchdog: HEALTHY again after a failure it found"]


def test_a_recovery_tick_that_joins_a_run_still_going_keeps_it_for_the_next_tick() -> None:
    runs, found = Runs(["joined", "started"]), Found()
    dog = watchdog(runs, found)
    joined = dog.tick(Tick("t1", "2026-12-04T10:00:00Z"))
    assert (joined.outcome, joined.recovery) == ("joined", True)
    assert found.clusters == {"ml-cluster"}
    started = dog.tick(Tick("t2", "2026-12-04T10:01:00Z"))
    assert (started.outcome, started.recovery) == ("started", True)
    assert not found.clusters
    assert len(runs.asked) == 2
