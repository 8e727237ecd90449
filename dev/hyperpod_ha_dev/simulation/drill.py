"""A failover drill end to end on the embedded stack: the real drill state machine on moto's
interpreter, the real handlers, the drill's own documents run on simulated controllers.

The simulated controllers change because of what the drill asks: ``scontrol takeover 1``
makes ctl1 save its state and exit and ctl2 take control about two seconds later (capture
06); starting ctl1's slurmctld again gives control back to it (capture 06b). Jobs live in one
shared file: job 4 runs throughout, a submitted job runs, then completes. In
``drill-registration-lost`` the hand-back leaves slurmdbd with no controller registered (as
Slurm 24.11 does in the lab) until the drill's ``scontrol reconfigure``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

from hyperpod_ha_cli.execution_events import after
from hyperpod_ha_dev.simulation import scenarios as s
from hyperpod_ha_dev.simulation.cluster import SimulatedCluster, SimulatedController
from hyperpod_ha_dev.simulation.engine import AfterRun, simulated_run
from hyperpod_ha_dev.simulation.fake_controller import ControllerState, FakeController
from hyperpod_ha_dev.simulation.timeline import Follow, TimelineEntry, TimelineStream

# Seconds from the takeover (or the restart) until the new controller is in control.
CHANGE_SECONDS = 2.0
FINISH_SECONDS = 240
# Fast drills: one second between checks. The definition is not touched.
DRILL_INPUT = {"poll_seconds": 1, "max_checks": 10, "test_job_checks": 6}


class DrillSimulatedCluster(SimulatedCluster):
    """ctl1 primary, ctl2 backup; their states follow the takeovers the drill asks for."""

    loses_registration = False

    def __init__(self, controllers: Any, captures: Path) -> None:
        super().__init__(controllers, captures)
        self._phase = "steady"
        self._changed_at = 0.0
        self._jobs_seeded = False
        self._phase_lock = threading.Lock()
        self.events: list[tuple[float, str]] = []

    def state_for(self, controller: SimulatedController, check: int) -> ControllerState:
        states = self._states(time.monotonic())
        if states is None:  # before any takeover: what the scenario shows
            return super().state_for(controller, check)
        return states[0] if controller.identity == s.CTL1 else states[1]

    def _states(self, now: float) -> tuple[ControllerState, ControllerState] | None:
        settled = now - self._changed_at >= CHANGE_SECONDS
        if self._phase == "taken-over":
            return (s.KILLED_PRIMARY, s.TOOK_OVER) if settled else (s.KILLED_PRIMARY_EARLY, s.STANDBY_EARLY)
        if self._phase == "handed-back":
            return (s.RESTARTED_PRIMARY, s.BACK_TO_STANDBY) if settled else (s.KILLED_PRIMARY, s.TOOK_OVER)
        if self._phase == "unregistered":
            # ctl1 in control again, but ctl2's deregistration came after ctl1 registered.
            return tuple(  # type: ignore[return-value]
                dataclasses.replace(state, sacctmgr="sacctmgr_cluster_none.txt")
                for state in (s.RESTARTED_PRIMARY, s.BACK_TO_STANDBY)
            )
        return None

    def after_command(self, node: FakeController) -> None:
        if not self._jobs_seeded:
            # A long job running before the drill, and one that finished earlier.
            node.jobs_file.write_text("3 COMPLETED 0:0\n4 RUNNING 0:0\n")
            self._jobs_seeded = True
        self._advance_jobs(node.jobs_file)
        requests = node.requests_file
        if not requests.exists():
            return
        for line in requests.read_text().splitlines():
            words = line.split()
            if words[:2] == ["takeover", "1"] and self._phase == "steady":
                self._change("taken-over", line)
            elif words[:2] == ["start", s.CTL1.name] and self._phase == "taken-over":
                self._change("unregistered" if self.loses_registration else "handed-back", line)
            elif words[:2] == ["reconfigure", s.CTL1.name] and self._phase == "unregistered":
                self._phase = "handed-back"  # registered again, already settled
                self.events.append((time.time(), line))
        requests.unlink()

    def _change(self, phase: str, what: str) -> None:
        self._phase, self._changed_at = phase, time.monotonic()
        self.events.append((time.time(), what))
        # The new controller's log lines are logged when it takes control, not before the drill.
        settled = self._states(self._changed_at + CHANGE_SECONDS) or ()
        self.anchor(settled, dt.datetime.now() + dt.timedelta(seconds=CHANGE_SECONDS))

    @staticmethod
    def _advance_jobs(jobs: Path) -> None:
        """Submitted jobs (ids from 100) start at the next command and complete at the one after."""
        lines = []
        for line in jobs.read_text().splitlines():
            job, state, code = line.split()
            if int(job) >= 100 and state in ("PENDING", "RUNNING"):
                state = "RUNNING" if state == "PENDING" else "COMPLETED"
            lines.append(f"{job} {state} {code}")
        jobs.write_text("".join(f"{line}\n" for line in lines))


class RegistrationLosingCluster(DrillSimulatedCluster):
    """After the hand-back, no controller is registered with slurmdbd until a reconfigure."""

    loses_registration = True


@dataclass
class DrillResult:
    name: str
    report: dict[str, Any]
    status: str
    expect_outcome: str
    timeline: list[TimelineEntry] = field(default_factory=list)
    notifications: list[str] = field(default_factory=list)
    ops_items: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == "SUCCEEDED" and self.report.get("outcome") == self.expect_outcome

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.name,
            **self.report,
            "execution_status": self.status,
            "expected": {"outcome": self.expect_outcome},
            "passed": self.passed,
            "ops_items": self.ops_items,
            "timeline": [
                {"seconds": round(e.seconds, 2), "what": e.what, "detail": e.detail} for e in self.timeline
            ],
        }


@dataclass(frozen=True)
class DrillScenario:
    name: str
    summary: str
    base: s.Scenario
    request: dict[str, Any]
    expect_outcome: str
    cluster: type[DrillSimulatedCluster] = DrillSimulatedCluster


DRILL_SCENARIOS = {
    d.name: d
    for d in (
        DrillScenario(
            "drill",
            "a HEALTHY cluster: takeover to ctl2, jobs checked, a test job, hand back to ctl1",
            s.SCENARIOS["healthy"],
            {"hand_back": True},
            "completed",
        ),
        DrillScenario(
            "drill-refused",
            "slurmdbd stopped (DEGRADED): the drill is refused, nothing changes",
            s.SCENARIOS["slurmdbd-down"],
            {},
            "refused",
        ),
        DrillScenario(
            "drill-no-standby",
            "ctl2's slurmctld killed, ctl1 serves (HEALTHY, redundancy none): refused, no takeover",
            dataclasses.replace(
                s.SCENARIOS["healthy"],
                name="standby-killed",
                ctl1=(s.PRIMARY_BACKUP_DOWN,),
                ctl2=(s.STANDBY_KILLED,),
            ),
            {"hand_back": True},
            "refused",
        ),
        DrillScenario(
            "drill-registration-lost",
            "the hand-back leaves slurmdbd with no controller registered: the drill registers ctl1 again",
            s.SCENARIOS["healthy"],
            {"hand_back": True},
            "completed",
            RegistrationLosingCluster,
        ),
    )
}


def run_drill_scenario(
    scenario: DrillScenario, root: Path, after: AfterRun | None = None, follow: Follow | None = None
) -> DrillResult:
    """The drill on the embedded stack; ``follow`` is told each timeline entry as it comes."""
    with simulated_run(scenario.base, root, scenario.cluster) as run:
        sfn = boto3.client("stepfunctions")
        started = time.time()
        cluster = str(run.stack.parameters["ClusterName"])
        execution = sfn.start_execution(
            stateMachineArn=str(run.stack.outputs["FailoverDrillStateMachineArn"]),
            name=f"drill-{scenario.name}",
            input=json.dumps({"cluster": cluster, **DRILL_INPUT, **scenario.request}),
        )["executionArn"]
        stream = (
            TimelineStream(started, follow, timeline_entry, False, lambda: _controller_notes(started))
            if follow
            else None
        )
        described = _wait(sfn, execution, stream)
        report = json.loads(described.get("output") or "{}")
        history = sfn.get_execution_history(executionArn=execution, maxResults=1000)["events"]
        timeline = [e for e in (timeline_entry(dict(event), started) for event in history) if e is not None]
        timeline += _controller_notes(started)
        timeline.sort(key=lambda e: e.seconds)
        if after is not None:
            after(run)
        return DrillResult(
            scenario.name,
            report,
            described["status"],
            scenario.expect_outcome,
            timeline,
            ops_items=_ops_items(),
        )


def _controller_notes(started: float) -> list[TimelineEntry]:
    """What the simulated controllers did during the drill (killed, started, ...), so far."""
    from hyperpod_ha_dev.simulation.engine import _current

    cluster_sim = _current.cluster
    if not isinstance(cluster_sim, DrillSimulatedCluster):
        return []
    return [TimelineEntry(at - started, "  controller", what) for at, what in list(cluster_sim.events)]


def _wait(sfn: Any, execution: str, stream: TimelineStream | None = None) -> dict[str, Any]:
    deadline = time.monotonic() + FINISH_SECONDS
    while time.monotonic() < deadline:
        described: dict[str, Any] = sfn.describe_execution(executionArn=execution)
        if stream is not None:  # after the look, so the last events of a drill that just ended show
            stream.poll([execution])
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.2)
    raise TimeoutError(f"the drill did not finish within {FINISH_SECONDS} s")


def timeline_entry(event: dict[str, Any], started: float) -> TimelineEntry | None:
    at = event["timestamp"].timestamp() - started
    entered = event.get("stateEnteredEventDetails")
    if entered and not entered["name"].startswith("Run the probe"):
        return TimelineEntry(at, entered["name"])
    exited = event.get("stateExitedEventDetails")
    if exited and exited["name"] == "Measure the recovery":
        phase = json.loads(exited.get("output") or "{}").get("phase", {})
        return TimelineEntry(
            at,
            "  measured",
            f"{phase.get('name')}: {phase.get('verdict')}, active {after(phase.get('active_seconds'))}, "
            f"verified {after(phase.get('verified_seconds'))}",
        )
    failed = event.get("executionFailedEventDetails")
    if failed:
        return TimelineEntry(at, "execution failed", str(failed.get("error")))
    return None


def _ops_items() -> list[dict[str, Any]]:
    found = boto3.client("ssm").describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    )
    return [
        {"ops_item_id": i["OpsItemId"], "title": i.get("Title"), "status": i.get("Status")}
        for i in found["OpsItemSummaries"]
    ]
