"""A tick that finds the Slurm triggers missing installs them: on the active controller first, then
where the program is missing; not while silenced or while a drill holds the cluster; judged again
from what the install left, so a deploy's missing triggers start no run. The whole path on the
embedded stack is in tests/functions/test_watchdog_triggers.py."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from hyperpod_ha.commands import CommandRequest, CommandResult, TargetUnreachable
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.lease import Lease
from hyperpod_ha.slurm.triggers import TRIGGER_EVENTS
from hyperpod_ha.verdict import VerdictPolicy
from hyperpod_ha.watchdog.function import WatchdogFunctionSettings
from hyperpod_ha.watchdog.scheduled_check import Watchdog
from hyperpod_ha.watchdog.trigger_install import TriggerInstall, plan_install
from tests.fakes.canned_runner import CannedRunner
from tests.unit.verdict.cases.verdict_cases_crash_cause import CTL1_DIED, CTL2_DIED
from tests.unit.verdict.cases.verdict_probes import STANDBY, Probe, Unreachable
from tests.unit.verdict.test_verdict_slurm_triggers import ALL, NONE, TOPIC, section
from tests.unit.watchdog.test_restore_start import NOW, TICK, Reads, drill_lease, watchdog
from tests.unit.watchdog.test_watchdog_function import ENVIRONMENT

EVERY = ",".join(event.name for event in TRIGGER_EVENTS)
ON = VerdictPolicy(slurm_triggers=True)
DOCUMENT = "SlurmTriggersDoc"


@dataclass
class Cluster:
    """The install's answers: the first install sets every trigger, later ones find them."""

    set_already: bool = False
    fail: bool = False
    installs: list[str] = field(default_factory=list)

    def respond(self, request: CommandRequest) -> CommandResult:
        assert request.document == DOCUMENT
        assert dict(request.parameters) == {"mode": ["install"], "topicArn": [TOPIC]}
        self.installs.append(request.target)
        if self.fail:
            values = f"installed=\nalready=\nfailed={EVERY}\nHYPERPOD_HA_RESULT rc=1"
        elif self.set_already:
            values = f"installed=\nalready={EVERY}\nfailed=\nHYPERPOD_HA_RESULT rc=0"
        else:
            self.set_already = True
            values = f"installed={EVERY}\nalready=\nfailed=\nHYPERPOD_HA_RESULT rc=0"
        return CommandResult(f"program=/p\nprogram_action=written\n{values}\n", None, 0, 0.1, "fake")


def with_triggers(
    probes: tuple[Probe | Unreachable, ...],
    reads: Reads,
    cluster: Cluster,
    runner: CannedRunner | None = None,
) -> Watchdog:
    dog, _ = watchdog(probes, reads, mode="off")
    runner = runner or CannedRunner(respond=cluster.respond)
    install = TriggerInstall(runner, DOCUMENT, TOPIC, reads.read_lease, reads.silenced)
    return dataclasses.replace(dog, policy=ON, triggers=install, found=Found())  # type: ignore[arg-type]


def fresh() -> tuple[Probe, Probe]:
    """A cluster the stack was just deployed on: no trigger, no program anywhere."""
    return Probe(triggers=NONE), dataclasses.replace(STANDBY, triggers=NONE)


def targets(cluster: Cluster) -> list[str]:
    return [target.split("machine-", 1)[1] for target in cluster.installs]


class Found:
    """The watchdog's memory of a failure it found (it starts a run on a not verified tick)."""

    def pending(self, cluster: str) -> bool:
        return False

    def remember(self, *args: object) -> None:
        pass


def test_a_fresh_cluster_gets_them_on_the_active_controller_first_and_no_run() -> None:
    cluster = Cluster()
    dog = with_triggers(fresh(), Reads(), cluster)
    result = dog.tick(TICK)
    assert targets(cluster) == ["i-0ctl1000000000000", "i-0ctl2000000000000"]
    assert (result.outcome, result.verdict.name.value) == ("verified", "HEALTHY")
    step = result.to_json()["slurm_triggers"]
    assert (step["outcome"], step["installed"], step["reason"]) == (
        "installed",
        11,
        "11 Slurm trigger(s) missing",
    )
    assert step["controllers"]["ctl1"]["installed"] == EVERY.split(",")
    assert step["controllers"]["ctl2"]["already"] == 11


def test_all_there_runs_nothing() -> None:
    cluster = Cluster()
    result = with_triggers(
        (Probe(triggers=ALL), dataclasses.replace(STANDBY, triggers=ALL)), Reads(), cluster
    ).tick(TICK)
    assert cluster.installs == []
    assert result.to_json()["slurm_triggers"]["outcome"] == "nothing"
    assert result.verdict.name.value == "HEALTHY"


def test_only_the_controller_without_the_program_gets_it() -> None:
    cluster = Cluster(set_already=True)
    probes = (
        Probe(triggers=ALL),
        dataclasses.replace(STANDBY, triggers=section(tuple(EVERY.split(",")), "missing")),
    )
    result = with_triggers(probes, Reads(), cluster).tick(TICK)
    assert targets(cluster) == ["i-0ctl2000000000000"]
    assert result.verdict.name.value == "HEALTHY"
    assert (
        result.to_json()["slurm_triggers"]["reason"]
        == "the Slurm trigger program is missing or out of date on ctl2"
    )


def test_a_program_for_another_topic_is_written_again() -> None:
    other = section(tuple(EVERY.split(",")))[0].replace(TOPIC, TOPIC + "-old"), 0
    cluster = Cluster(set_already=True)
    with_triggers((Probe(triggers=ALL), dataclasses.replace(STANDBY, triggers=other)), Reads(), cluster).tick(
        TICK
    )
    assert targets(cluster) == ["i-0ctl2000000000000"]


@pytest.mark.parametrize(
    ("reads", "why"),
    [
        (
            Reads(silence="silenced until 2026-12-06T18:00:00Z by bob: kernel"),
            "not installed: silenced until",
        ),
        (Reads(lease=drill_lease(int(NOW) + 600)), "not installed while drill arn:aws:states"),
    ],
)
def test_silenced_or_held_installs_nothing_and_the_drift_stands(reads: Reads, why: str) -> None:
    cluster = Cluster()
    result = with_triggers(fresh(), reads, cluster).tick(TICK)
    assert cluster.installs == []
    step = result.to_json()["slurm_triggers"]
    assert step["outcome"] == "skipped"
    assert why in step["reason"]
    assert result.verdict.name.value == "DEGRADED"
    assert result.outcome == "started"  # the drift, as any not verified tick


def test_a_run_holding_the_lease_does_not_stop_it() -> None:
    run = Lease.for_run("r1", "watchdog:t", "verify-r1", int(NOW) - 60, 3600)
    cluster = Cluster()
    with_triggers(fresh(), Reads(lease=run), cluster).tick(TICK)
    assert len(cluster.installs) == 2


def test_a_failed_install_stops_before_the_others_and_is_told() -> None:
    cluster = Cluster(fail=True)
    result = with_triggers(fresh(), Reads(), cluster).tick(TICK)
    assert targets(cluster) == ["i-0ctl1000000000000"]  # two installs would both set what is missing
    step = result.to_json()["slurm_triggers"]
    assert (step["outcome"], step["reason"]) == (
        "failed",
        "11 Slurm trigger(s) missing; install failed on ctl1",
    )
    assert result.verdict.name.value == "DEGRADED"


def test_an_unreachable_controller_is_a_failed_install_never_a_failed_tick() -> None:
    runner = CannedRunner(error=TargetUnreachable("TargetNotConnected"))
    result = with_triggers(fresh(), Reads(), Cluster(), runner).tick(TICK)
    step = result.to_json()["slurm_triggers"]
    assert step["outcome"] == "failed"
    assert step["controllers"]["ctl1"] == {"error": "TargetUnreachable: TargetNotConnected"}


def test_without_an_active_controller_nothing_is_tried() -> None:
    probes = (dataclasses.replace(CTL1_DIED, triggers=NONE), dataclasses.replace(CTL2_DIED, triggers=NONE))
    cluster = Cluster()
    result = with_triggers(probes, Reads(), cluster).tick(TICK)
    assert cluster.installs == []
    assert "no controller is active" in result.to_json()["slurm_triggers"]["reason"]


def test_unknown_triggers_are_left_alone() -> None:
    """No strigger answer (fake or old nodes, slurmctld away): nothing to install."""
    verdict_reports = [Probe().report(), STANDBY.report()]
    from hyperpod_ha.verdict import evaluate

    plan = plan_install(verdict_reports, evaluate(verdict_reports, ON), TOPIC, ON)
    assert plan.targets == ()


def test_off_has_no_install_and_no_drift() -> None:
    dog, _ = watchdog(fresh(), Reads(), mode="off")
    result = dog.tick(TICK)
    assert result.verdict.name.value == "HEALTHY"
    assert result.to_json()["slurm_triggers"] is None


def test_the_settings_turn_it_on_with_its_document_and_topic() -> None:
    on = {**ENVIRONMENT, "SLURM_TRIGGERS": "on"}
    with pytest.raises(ConfigurationError, match="SLURM_TRIGGERS is on without"):
        WatchdogFunctionSettings.from_environment(on)
    read = WatchdogFunctionSettings.from_environment(
        {**on, "SLURM_TRIGGERS_DOCUMENT": DOCUMENT, "SLURM_FAILOVER_TOPIC_ARN": TOPIC}
    )
    assert (read.policy.slurm_triggers, read.slurm_triggers_document, read.failover_topic_arn) == (
        True,
        DOCUMENT,
        TOPIC,
    )
    assert WatchdogFunctionSettings.from_environment(ENVIRONMENT).policy.slurm_triggers is False
