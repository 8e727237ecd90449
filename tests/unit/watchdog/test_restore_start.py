"""A verified tick with a standby not ready starts a verification run for a restore, bounded by
the restore's planner: once per tick when an action is possible; not when the budget is spent,
the mode is off, only the configured primary is down with ``standbys``, a guard blocks or a drill
holds the cluster. The settings come from the template's restore parameters, within their bounds.
The whole path (tick, run, restore, HEALTHY again) is in tests/functions/test_watchdog_restore.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from hyperpod_ha.controllers.maintenance import Maintenance, NodeUnderUpdate
from hyperpod_ha.controllers.models import ClusterControllers, Controller, ControllerReport
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.lease import Lease
from hyperpod_ha.observability import metrics
from hyperpod_ha.restore.settings import RestoreSettings
from hyperpod_ha.runs.models import RunDecision
from hyperpod_ha.trigger import Trigger
from hyperpod_ha.verdict import evaluate
from hyperpod_ha.watchdog.function import WatchdogFunction, WatchdogFunctionSettings
from hyperpod_ha.watchdog.restore_start import RestoreStart, holds
from hyperpod_ha.watchdog.scheduled_check import Watchdog
from hyperpod_ha.watchdog.tick import Tick
from tests.unit.restore.test_planner import FAILED_OVER, PRIMARY, STANDBY_DEAD
from tests.unit.verdict.cases.verdict_probes import STANDBY, Probe, Unreachable, node
from tests.unit.watchdog.test_watchdog_function import ENVIRONMENT

NOW = 1_795_995_200.0
TICK = Tick("tick-1", "2026-12-04T10:00:00Z")
DRILL_ARN = "arn:aws:states:us-east-1:123456789012:execution:hyperpod-ha-drill:drill-1"


@dataclass
class Runs:
    """The runs as the watchdog uses them: every start or join recorded."""

    started: list[tuple[str, Trigger, str]] = field(default_factory=list)

    def start_or_join(self, cluster: str, trigger: Trigger, reason: str) -> RunDecision:
        self.started.append((cluster, trigger, reason))
        return RunDecision("started", f"arn:aws:states:::execution:verify:{trigger.id}", "lease-1")


class NothingFound:
    def pending(self, cluster: str) -> bool:
        return False


@dataclass
class Reads:
    """What the restore start reads from the state table, counted."""

    used: int = 0
    lease: Lease | None = None
    hours: list[int] = field(default_factory=list)
    lease_reads: int = 0
    silence: str | None = None  # the operator's silence in force, in words

    def actions_this_hour(self, hour: int) -> int:
        self.hours.append(hour)
        return self.used

    def read_lease(self) -> Lease | None:
        self.lease_reads += 1
        return self.lease

    def silenced(self) -> str | None:
        return self.silence


def restore_start(
    reads: Reads, mode: str = "standbys", max_per_hour: int = 2, cluster_id: str | None = None
) -> RestoreStart:
    settings = RestoreSettings(mode, max_per_hour, cluster_id=cluster_id)
    return RestoreStart(
        settings, "RestoreDoc", reads.actions_this_hour, reads.read_lease, "c1", reads.silenced
    )


@dataclass
class Unreached:
    """The watchdog's record of since when each controller is unreachable, as it would read it."""

    since: dict[str, int]

    def note(self, reports: Any, now: float) -> dict[str, int]:
        return dict(self.since)


def drill_lease(expires_at: int) -> Lease:
    return Lease.for_execution("drill", "d1", DRILL_ARN, int(NOW) - 60, expires_at - int(NOW) + 60)


def watchdog(
    probes: tuple[Probe | Unreachable, ...],
    reads: Reads,
    mode: str = "standbys",
    maintenance: Maintenance | None = None,
    *,
    cluster_id: str | None = None,
    unreachable: Unreached | None = None,
) -> tuple[Watchdog, Runs]:
    reports = {report.instance_id: report for report in (probe.report() for probe in probes)}
    found = ClusterControllers(
        "ml-cluster",
        "arn:aws:sagemaker:us-east-1:123456789012:cluster/abc123def456",
        "abc123def456",
        "InService",
        tuple(node(probe.name) for probe in probes),
        maintenance=maintenance or Maintenance("InService"),
    )

    def check(controller: Controller) -> ControllerReport:
        return reports[controller.instance_id]

    runs = Runs()
    dog = Watchdog(
        "ml-cluster",
        lambda: found,
        check,
        runs,  # type: ignore[arg-type]
        NothingFound(),  # type: ignore[arg-type]
        lambda: NOW,
        restore=restore_start(reads, mode, cluster_id=cluster_id),
        unreachable=unreachable,  # type: ignore[arg-type]
    )
    return dog, runs


# --- the start rule, through Watchdog.tick ----------------------------------------------------


def test_a_dead_standby_on_a_healthy_cluster_starts_one_run_for_the_restore() -> None:
    reads = Reads()
    dog, runs = watchdog((PRIMARY, STANDBY_DEAD), reads)
    result = dog.tick(TICK)
    assert (result.verdict.name.value, result.verdict.redundancy) == ("HEALTHY", "none")
    assert (result.outcome, result.restore) == ("started", True)
    assert result.restore_reason == "a restore would act: start-slurmctld ctl2 (slurmctld not running)"
    [(cluster, trigger, reason)] = runs.started  # one run, through the lease as every trigger
    assert (cluster, trigger.source, trigger.id) == ("ml-cluster", "watchdog", TICK.id)
    assert reason.startswith("watchdog: HEALTHY with redundancy none: a restore would act")
    assert reads.hours == [int(NOW) // 3600]  # the restore's count of this hour
    json = result.to_json()
    assert (json["restore"], json["restore_reason"]) == (True, result.restore_reason)


@pytest.mark.parametrize(
    ("probes", "mode", "reads", "maintenance", "why"),
    [
        (
            (PRIMARY, STANDBY_DEAD),
            "standbys",
            Reads(used=2),
            None,
            "restoring stopped: 2 restore actions on this cluster this hour already",
        ),
        (
            (PRIMARY, STANDBY_DEAD),
            "off",
            Reads(),
            None,
            "RestoreRedundancy is off: the restore is left to a person",
        ),
        (FAILED_OVER, "standbys", Reads(), None, "the configured primary ctl1 is left as it is"),
        (
            (PRIMARY, STANDBY_DEAD),
            "standbys",
            Reads(),
            Maintenance("SystemUpdating"),
            "not restored: HyperPod is updating the cluster",
        ),
        (
            (PRIMARY, STANDBY_DEAD),
            "standbys",
            Reads(),
            Maintenance("InService", (NodeUnderUpdate(node("ctl2").instance_id, "SystemUpdating"),)),
            "ctl2: not restored: HyperPod is updating that node (SystemUpdating)",
        ),
        (
            (PRIMARY, STANDBY_DEAD),
            "all",
            Reads(lease=drill_lease(int(NOW) + 600)),
            None,
            f"not restored: drill {DRILL_ARN} holds the cluster",
        ),
        (
            (PRIMARY, Unreachable("ctl2")),
            "all",
            Reads(),
            None,
            "ctl2: not reachable through SSM (TargetUnreachable",
        ),
        (
            (PRIMARY, STANDBY_DEAD),
            "all",
            Reads(silence="silenced until 2026-12-06T18:00:00Z by arn:aws:iam::1:user/bob: kernel"),
            None,
            "not restored: silenced until 2026-12-06T18:00:00Z by arn:aws:iam::1:user/bob: kernel",
        ),
    ],
    ids=[
        "budget spent",
        "mode off",
        "standbys: only the primary down",
        "guard: cluster updating",
        "guard: that node updating",
        "a drill holds the cluster",
        "standby unreachable: since when not recorded yet",
        "the operator's silence",
    ],
)
def test_no_run_when_the_restore_would_not_act(
    probes: tuple[Probe | Unreachable, ...],
    mode: str,
    reads: Reads,
    maintenance: Maintenance | None,
    why: str,
) -> None:
    dog, runs = watchdog(probes, reads, mode, maintenance)
    result = dog.tick(TICK)
    assert result.verdict.verified
    assert result.verdict.redundancy in ("reduced", "none")
    assert result.restore_reason is not None
    assert why in result.restore_reason
    assert (result.outcome, result.restore) == ("verified", False)
    assert runs.started == []


def test_mode_off_reads_nothing() -> None:
    reads = Reads()
    watchdog((PRIMARY, STANDBY_DEAD), reads, "off")[0].tick(TICK)
    assert (reads.hours, reads.lease_reads) == ([], 0)


def test_full_redundancy_is_not_weighed_and_reads_nothing() -> None:
    reads = Reads()
    dog, runs = watchdog((Probe(), STANDBY), reads, "all")
    result = dog.tick(TICK)
    assert (result.verdict.name.value, result.verdict.redundancy) == ("HEALTHY", "full")
    assert (result.outcome, result.restore, result.restore_reason) == ("verified", False, None)
    assert (runs.started, reads.hours, reads.lease_reads) == ([], [], 0)


def test_all_hands_back_after_a_failover_starts_a_run() -> None:
    dog, runs = watchdog(FAILED_OVER, Reads(), "all")
    result = dog.tick(TICK)
    assert (result.verdict.name.value, result.outcome, result.restore) == ("FAILED_OVER", "started", True)
    assert result.restore_reason == "a restore would act: hand-back ctl1 (slurmctld not running)"
    assert len(runs.started) == 1


@pytest.mark.parametrize(
    ("minutes_unreachable", "cluster_id", "started", "why"),
    [
        (16, "abc123def456", True, "a restore would act: reboot-node ctl2 (not reachable through SSM"),
        (14, "abc123def456", False, "its node is rebooted once it has lasted RestoreUnreachableMinutes=15"),
        (16, None, False, "the stack's ClusterId is empty: no grant to reboot nodes"),
        (16, "fff123def456", False, "is not this cluster's id abc123def456: no grant to reboot"),
    ],
    ids=["past the minutes: a run", "not yet", "no ClusterId: no grant", "another cluster's id"],
)
def test_an_unreachable_standby_starts_a_run_for_its_reboot_only_past_the_minutes_with_the_grant(
    minutes_unreachable: int, cluster_id: str | None, started: bool, why: str
) -> None:
    ctl2 = Unreachable("ctl2").report().instance_id
    since = Unreached({ctl2: int(NOW) - minutes_unreachable * 60})
    dog, runs = watchdog(
        (PRIMARY, Unreachable("ctl2")), Reads(), "all", cluster_id=cluster_id, unreachable=since
    )
    result = dog.tick(TICK)
    assert result.unreachable == since.since  # the record the tick kept is in its result
    assert (result.outcome, result.restore) == (("started", True) if started else ("verified", False))
    assert result.restore_reason is not None
    assert why in result.restore_reason
    assert len(runs.started) == int(started)


def test_the_last_action_of_the_hour_still_starts_a_run() -> None:
    dog, runs = watchdog((PRIMARY, STANDBY_DEAD), Reads(used=1), "standbys")
    assert dog.tick(TICK).restore is True
    assert len(runs.started) == 1


# --- what holds the cluster ------------------------------------------------------------------


def test_a_run_holding_the_lease_is_joined_an_expired_drill_holds_nothing() -> None:
    run = Lease.for_run("r1", "sns:m-1", "verify-r1", int(NOW) - 10, 3600)
    assert holds(run, NOW).holder is None
    assert holds(None, NOW).holder is None
    assert holds(drill_lease(int(NOW) - 1), NOW).holder is None
    assert holds(drill_lease(int(NOW) + 60), NOW).holder == f"drill {DRILL_ARN}"
    restore = Lease.for_execution("restore", "x1", "arn:aws:states:::execution:restore:r", int(NOW), 3600)
    assert holds(restore, NOW).holder == "restore arn:aws:states:::execution:restore:r"


def test_a_rollout_holds_the_cluster_however_it_was_started_until_its_lease_expires() -> None:
    # A rotation's finishSecret and an operator's {"action": "rollout"} hold the same lease kind.
    function = "arn:aws:lambda:us-east-1:123456789012:function:rotate"
    rollout = Lease.for_rollout("o1", function, "req-1", int(NOW), int(NOW) + 960)
    assert holds(rollout, NOW).holder == "a roll-out of the database secret (invocation req-1)"
    assert holds(rollout, NOW + 961).holder is None  # a crashed roll-out's lease has expired


def test_a_not_verified_verdict_is_not_weighed() -> None:
    reads = Reads()
    split = evaluate([Probe(heartbeat=(0, 0)).report(), FAILED_OVER[1].report()])
    assert not split.verified
    assert restore_start(reads, "all").weigh(split, [], Maintenance("InService"), NOW) is None
    assert reads.lease_reads == 0


# --- the settings, from the template's restore parameters -------------------------------------


def test_the_settings_default_to_the_templates_restore_defaults() -> None:
    read = WatchdogFunctionSettings.from_environment(ENVIRONMENT)
    assert (read.restore.mode, read.restore.max_per_hour, read.restore_document) == ("off", 2, None)
    given = WatchdogFunctionSettings.from_environment(
        {
            **ENVIRONMENT,
            "RESTORE_REDUNDANCY": "standbys",
            "RESTORE_MAX_PER_HOUR": "10",
            "RESTORE_DOCUMENT": "hyperpod-ha-RestoreSlurmctldDocument",
            "RESTORE_UNREACHABLE_MINUTES": "30",
            "CLUSTER_ID": "abc123def456",
        }
    )
    assert (given.restore.mode, given.restore.max_per_hour) == ("standbys", 10)
    assert given.restore_document == "hyperpod-ha-RestoreSlurmctldDocument"
    assert (given.restore.unreachable_seconds, given.restore.cluster_id) == (1800, "abc123def456")
    assert read.restore.unreachable_seconds == 15 * 60


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("RESTORE_MAX_PER_HOUR", "0"),
        ("RESTORE_MAX_PER_HOUR", "11"),
        ("RESTORE_MAX_PER_HOUR", "two"),
        ("RESTORE_REDUNDANCY", "everything"),
        ("RESTORE_UNREACHABLE_MINUTES", "4"),
        ("RESTORE_UNREACHABLE_MINUTES", "1441"),
        ("CLUSTER_ID", "ABC123DEF456"),
        ("CLUSTER_ID", "abc123"),
    ],
)
def test_a_restore_setting_out_of_bounds_is_refused_and_counted(name: str, value: str) -> None:
    with pytest.raises(ConfigurationError, match=name):
        WatchdogFunctionSettings.from_environment({**ENVIRONMENT, name: value})
    assert "WatchdogConfigurationErrors" in metrics.metric_set


def test_a_tick_that_starts_a_run_for_a_restore_is_not_counted_as_not_verified() -> None:
    dog, _ = watchdog((PRIMARY, STANDBY_DEAD), Reads())
    tick: dict[str, Any] = {
        "source": "hyperpod-ha.watchdog",
        "tick_id": "t-1",
        "scheduled_time": TICK.scheduled_time,
    }
    result = WatchdogFunction(dog).handle(tick, None)  # type: ignore[arg-type]
    assert (result["outcome"], result["restore"]) == ("started", True)
    assert "WatchdogNotVerified" not in metrics.metric_set
