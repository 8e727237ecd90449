"""Running a scenario end to end: the trigger through the real path, the real state machine
on moto's interpreter, the real handlers, the probe on simulated controllers."""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

from hyperpod_ha.commands import CommandRequest, CommandResult, CommandRunner, register_transport
from hyperpod_ha.notifications import SUBJECT
from hyperpod_ha.state_table import read_lease
from hyperpod_ha_dev import CAPTURES
from hyperpod_ha_dev.embedded import delivery
from hyperpod_ha_dev.embedded.site import Site, SiteController, create_site, embedded_aws
from hyperpod_ha_dev.embedded.stack import EmbeddedStack, create_stack
from hyperpod_ha_dev.simulation.cluster import TRANSPORT, SimulatedCluster, SimulatedController
from hyperpod_ha_dev.simulation.scenarios import CTL1, CTL1_INSTANCE, CTL2, CTL2_INSTANCE, Scenario
from hyperpod_ha_dev.simulation.timeline import (
    Follow,
    TimelineEntry,
    TimelineStream,
    delivery_entry,
    history_entry,
    timeline_json,
)

# Fast runs: one second between checks, at most three. The definition is not touched.
RUN_PARAMETERS = {"BackoffSeconds": 1, "MaxAttempts": 3, "SnapshotPollSeconds": 0}
SITE_CONTROLLERS = (
    SiteController(CTL1_INSTANCE, CTL1.address, CTL1.name),
    SiteController(CTL2_INSTANCE, CTL2.address, CTL2.name),
)
FINISH_SECONDS = 180


class _CurrentCluster:
    """The ``simulated`` transport: handlers cache their runner, scenarios change the cluster."""

    transport = TRANSPORT
    cluster: SimulatedCluster | None = None

    def run(self, request: CommandRequest) -> CommandResult:
        if self.cluster is None:
            raise RuntimeError("no simulated cluster is running")
        return self.cluster.run(request)


_current = _CurrentCluster()


def _runner() -> CommandRunner:
    return _current


def _arns(stack: EmbeddedStack) -> list[str]:
    return [e["executionArn"] for e in sorted(stack.executions(), key=lambda e: e["startDate"])]


@dataclass
class ScenarioResult:
    scenario: Scenario
    verdict: str | None
    incidents: list[dict[str, Any]]
    snapshots: list[dict[str, Any]]
    executions: list[dict[str, Any]]
    lease_released: bool
    timeline: list[TimelineEntry] = field(default_factory=list)
    reasons: tuple[str, ...] = ()  # the last verdict's
    reason_codes: tuple[str, ...] = ()  # their codes, in the same order
    # The last verdict's redundancy (full, reduced, none, unknown) and ready standbys.
    redundancy: str | None = None
    standbys: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return (
            self.verdict == self.scenario.expect_verdict
            and len(self.incidents) == self.scenario.expect_incidents
            and len(self.snapshots) == self.scenario.expect_snapshots
            and len(self.executions) == self.scenario.expect_executions
            and self.lease_released
            and set(self.scenario.expect_codes) <= set(self.reason_codes)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario.name,
            "verdict": self.verdict,
            "incidents": self.incidents,
            "snapshots": self.snapshots,
            "executions": len(self.executions),
            "execution_results": self.executions,
            "lease_released": self.lease_released,
            "expected": {
                "verdict": self.scenario.expect_verdict,
                "incidents": self.scenario.expect_incidents,
                "snapshots": self.scenario.expect_snapshots,
                "executions": self.scenario.expect_executions,
            },
            "passed": self.passed,
            "reasons": list(self.reasons),
            "reason_codes": list(self.reason_codes),
            "redundancy": self.redundancy,
            "standbys": list(self.standbys),
            "timeline": [timeline_json(e) for e in self.timeline],
        }


@dataclass
class EmbeddedRun:
    """The embedded stack set up for one scenario: the site, the stack, and when it began."""

    site: Site
    stack: EmbeddedStack
    started: float

    def notify(self, message: str, subject: str | None = SUBJECT) -> str:
        """Publish on the cluster's failover topic: by default a controller status change as the
        lifecycle scripts would; with ``subject``, what a node published under it (a Slurm
        trigger's program, ``None`` for none). Its MessageId."""
        sns = boto3.client("sns")
        topic = self.site.failover_topic_arn
        if subject is None:
            answer = sns.publish(TopicArn=topic, Message=message)
        else:
            answer = sns.publish(TopicArn=topic, Subject=subject, Message=message)
        return str(answer["MessageId"])

    def finish(
        self, scenario: Scenario, timeout: float = FINISH_SECONDS, follow: Follow | None = None
    ) -> ScenarioResult:
        """Wait until every run has ended (telling ``follow`` each timeline entry as it comes),
        then collect what came out of it."""
        stream = TimelineStream(self.started, follow) if follow is not None else None
        try:
            _wait_for_runs(self.stack, timeout, stream)
        finally:
            self.stack.stop_running_executions()
        return _collect(scenario, self.stack, self.started)


AfterRun = Callable[[EmbeddedRun], None]
"""Called with the finished run while its embedded stack still exists (``simulate --status``)."""


@contextlib.contextmanager
def embedded_run(
    root: Path,
    controllers: Sequence[SiteController],
    transport: str,
    parameters: Mapping[str, Any],
    function_environment: Mapping[str, str] | None = None,
    function_transports: Mapping[str, str] | None = None,
    *,
    fast: bool = True,
) -> Iterator[EmbeddedRun]:
    """The embedded stack, its site listing ``controllers``, health checks through ``transport``.
    ``fast``: :data:`RUN_PARAMETERS` under ``parameters``; otherwise the template's defaults."""
    with embedded_aws():
        site = create_site(controllers=tuple(controllers))
        site.extra_parameters.update({**(RUN_PARAMETERS if fast else {}), **parameters})
        stack = create_stack(root, site.stack_parameters())
        for checking in ("HealthCheckFunction", "WatchdogFunction"):
            if checking in stack.functions:
                stack.override_environment(
                    checking, COMMAND_TRANSPORT=transport, **(function_environment or {})
                )
        for function, other_transport in (function_transports or {}).items():
            stack.override_environment(function, COMMAND_TRANSPORT=other_transport)
        delivery.deliveries.clear()
        yield EmbeddedRun(site, stack, time.time())


def run_scenario(
    scenario: Scenario, root: Path, after: AfterRun | None = None, follow: Follow | None = None
) -> ScenarioResult:
    with simulated_run(scenario, root) as run:
        if scenario.trigger == "watchdog":
            # Nothing is published: the failure is found at the watchdog's next tick.
            run.stack.tick()
        else:
            run.notify(scenario.notification)
        if scenario.trigger == "duplicate-storm":
            _storm(scenario, run.stack)
        result = run.finish(scenario, follow=follow)
        if after is not None:
            after(run)
        return result


@contextlib.contextmanager
def simulated_run(
    scenario: Scenario, root: Path, cluster_type: type[SimulatedCluster] = SimulatedCluster
) -> Iterator[EmbeddedRun]:
    """The embedded stack with the scenario's simulated controllers answering the probe
    (and, for a drill, the drill's commands: ``cluster_type`` decides how they change)."""
    register_transport(TRANSPORT, _runner)
    cluster = cluster_for(scenario, root, cluster_type)
    _current.cluster = cluster
    try:
        with embedded_run(
            root,
            SITE_CONTROLLERS,
            TRANSPORT,
            scenario.parameters,
            function_transports={"FailoverDrillFunction": TRANSPORT, "RestoreRedundancyFunction": TRANSPORT},
        ) as run:
            cluster.anchor_now()  # the stack is up: the scenario starts now
            yield run
    finally:
        _current.cluster = None
        cluster.close()


def cluster_for(
    scenario: Scenario, root: Path, cluster_type: type[SimulatedCluster] = SimulatedCluster
) -> SimulatedCluster:
    """The scenario's two controllers, answering from the captures of a real Slurm pair."""
    return cluster_type(
        (
            SimulatedController(CTL1, CTL1_INSTANCE, scenario.ctl1),
            SimulatedController(CTL2, CTL2_INSTANCE, scenario.ctl2),
        ),
        CAPTURES,
    )


def _storm(scenario: Scenario, stack: EmbeddedStack) -> None:
    """SNS delivers at least once (the same record twice more); node events come in storms."""
    first = delivery.deliveries[0]
    for _ in range(2):
        delivery.invoke_async(stack.function(first.function), first.event)
    events = boto3.client("events")
    for index in range(scenario.node_events):
        instance = CTL1_INSTANCE if index % 2 == 0 else CTL2_INSTANCE
        cluster = stack.parameters["ClusterName"]
        detail = {
            "ClusterName": cluster,
            "ClusterArn": f"arn:aws:sagemaker:us-east-1:123456789012:cluster/{cluster}",
            "InstanceId": instance,
            "HealthSummary": {
                "HealthStatus": "Unhealthy",
                "HealthStatusReason": "slurmctld not responding",
                "RepairAction": "None",
            },
        }
        events.put_events(
            Entries=[
                {
                    "Source": "aws.sagemaker",
                    "DetailType": "SageMaker HyperPod Cluster Node Health Event",
                    "Detail": json.dumps(detail),
                    "Resources": [str(uuid.uuid4())],
                }
            ]
        )


def _wait_for_runs(stack: EmbeddedStack, timeout: float, stream: TimelineStream | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        executions = stack.executions()
        done = bool(executions) and all(e["status"] != "RUNNING" for e in executions)
        if stream is not None:  # after the look, so the last events of a run that just ended show
            stream.poll(_arns(stack))
        if done:
            return
        time.sleep(0.2)
    raise TimeoutError(f"the verification did not finish within {timeout} s")


def _collect(scenario: Scenario, stack: EmbeddedStack, started: float) -> ScenarioResult:
    sfn = boto3.client("stepfunctions")
    timeline = [delivery_entry(d, started) for d in delivery.deliveries]
    executions = []
    verdict = None
    reasons: tuple[str, ...] = ()
    last: Mapping[str, Any] = {}
    for execution in sorted(stack.executions(), key=lambda e: e["startDate"]):
        described = sfn.describe_execution(executionArn=execution["executionArn"])
        executions.append(
            {
                "name": described.get("name", ""),
                "status": described["status"],
                "error": described.get("error"),
            }
        )
        history = sfn.get_execution_history(executionArn=execution["executionArn"], maxResults=1000)["events"]
        for event in history:
            entry, seen = history_entry(dict(event), started)
            if entry is not None:
                timeline.append(entry)
            if seen is not None:
                verdict, reasons = str(seen.get("verdict")), entry.reasons if entry else ()
                last = seen
    timeline.sort(key=lambda e: e.seconds)
    return ScenarioResult(
        scenario=scenario,
        verdict=verdict,
        incidents=_incidents(),
        snapshots=_snapshots(stack),
        executions=executions,
        lease_released=_lease_released(stack),
        timeline=timeline,
        reasons=reasons,
        reason_codes=tuple(str(code) for code in last.get("reason_codes") or ()),
        redundancy=str(last["redundancy"]) if last.get("redundancy") else None,
        standbys=tuple(str(s) for s in last.get("standbys") or ()),
    )


def _incidents() -> list[dict[str, Any]]:
    ssm = boto3.client("ssm")
    found = ssm.describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    )
    return [
        {
            "ops_item_id": i["OpsItemId"],
            "title": i.get("Title"),
            "severity": i.get("Severity"),
            "status": i.get("Status"),
        }
        for i in found["OpsItemSummaries"]
    ]


def _snapshots(stack: EmbeddedStack) -> list[dict[str, Any]]:
    fsx = boto3.client("fsx")
    backups = fsx.describe_backups()["Backups"]
    ours = [b for b in backups if {"Key": "created-by", "Value": "hyperpod-ha"} in b.get("Tags", [])]
    return [{"backup_id": b["BackupId"], "status": b["Lifecycle"]} for b in ours]


def _lease_released(stack: EmbeddedStack) -> bool:
    cluster = stack.parameters["ClusterName"]
    return read_lease(boto3.client("dynamodb"), stack.ref("StateTable"), cluster) is None
