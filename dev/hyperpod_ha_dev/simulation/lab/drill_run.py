"""``hyperpod-ha drill start --lab``: the drill state machine on the embedded stack, its commands
run on the lab's real controllers (the ``lab-agent`` transport).

The lab is used as it is (brought up first only when it is not up as asked): a drill refuses a
cluster that is not HEALTHY, and a fault injected beforehand (``hyperpod-ha lab fault``) is
what shows that. Nothing is repaired afterwards: without ``hand_back`` the backup stays in
control. The embedded stack lives only while the drill runs, so its status view (what
``hyperpod-ha status --lab`` shows) is written to ``<lab root>/embedded-status.json``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import boto3

from hyperpod_ha_dev.embedded.site import SiteController
from hyperpod_ha_dev.simulation.drill import timeline_entry
from hyperpod_ha_dev.simulation.engine import embedded_run
from hyperpod_ha_dev.simulation.lab.lock import lab_lock
from hyperpod_ha_dev.simulation.lab.node_secret import NodeSecret
from hyperpod_ha_dev.simulation.lab.transport import LAB_TRANSPORT, attached_agent, lab_parameters
from hyperpod_ha_dev.simulation.lab.verify import slurm_version
from hyperpod_ha_dev.simulation.timeline import TimelineEntry
from hyperpod_lab import Lab
from hyperpod_lab.lab_state import read_state

STATUS_FILE: Final = "embedded-status.json"
# SlurmctldTimeout is 10 s in the lab. A check every 5 s, up to 12 per phase (about 80 s with
# the checks' own time): a 24.11 hand-back takes ~35 s until ctl1 is active, and a verdict not
# yet converged (DOWN, DEGRADED) is checked again until then; the slurmdbd registration that
# 24.11's hand-back loses is mended by the drill's registration step (docs/operations.md, Failover drills).
DRILL_INPUT: Final = {"poll_seconds": 5, "max_checks": 12, "test_job_checks": 12}
FINISH_SECONDS: Final = 600.0

# The status view of a stack: its outputs and the cluster -> what `hyperpod-ha status` shows.
StatusView = Callable[[Mapping[str, str], str], dict[str, Any]]


@dataclass
class LabDrill:
    status: str  # the execution's status
    report: dict[str, Any] | None  # the drill report (its output) when it succeeded
    error: str | None
    slurm_version: str | None
    controllers: int
    timeline: list[TimelineEntry] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            **(self.report or {}),
            "execution_status": self.status,
            "execution_error": self.error,
            "slurm_version": self.slurm_version,
            "controllers": self.controllers,
            "timeline": [
                {"seconds": round(e.seconds, 2), "what": e.what, "detail": e.detail} for e in self.timeline
            ],
        }


def lab_as_asked(slurm: str | None, controllers: int | None, root: Path | None = None) -> Lab:
    """The running lab (or the default one); with the release or controller count replaced."""
    lab = Lab(root=root) if root else Lab()
    changes: dict[str, Any] = {}
    if slurm is not None and slurm != lab.topology.slurm:
        changes["slurm"] = slurm
    if controllers is not None and controllers != lab.topology.controllers:
        changes["controllers"] = controllers
    if not changes:
        return lab
    return Lab(dataclasses.replace(lab.topology, **changes), admin=lab.admin)


def run_lab_drill(lab: Lab, project: Path, request: Mapping[str, Any], status_view: StatusView) -> LabDrill:
    """One drill (root only): ``request`` is the drill's input without the cluster; the stack's
    status view after it is kept for :func:`saved_status`."""
    with lab_lock():
        state = read_state(lab.topology.root)
        if state is None or not state.ready or state.topology != lab.topology:
            lab.up()
        controllers = [
            SiteController(c["instance_id"], c["private_ip"], c["hostname"]) for c in lab.controllers()
        ]
        secret = NodeSecret(lab.paths.node_secret_dir)
        try:
            with (
                attached_agent(lab, secret),
                embedded_run(
                    project,
                    controllers,
                    LAB_TRANSPORT,
                    lab_parameters({}),
                    function_transports={"FailoverDrillFunction": LAB_TRANSPORT},
                ) as run,
            ):
                stack = run.stack
                cluster = str(stack.parameters["ClusterName"])
                drill = _execute(
                    str(stack.outputs["FailoverDrillStateMachineArn"]), cluster, request, run.started
                )
                drill.slurm_version = slurm_version(lab)
                drill.controllers = len(controllers)
                status = status_view(stack.outputs, cluster)
                (lab.paths.root / STATUS_FILE).write_text(json.dumps(status, indent=2, default=str))
                return drill
        finally:
            secret.close()


def _execute(machine: str, cluster: str, request: Mapping[str, Any], started: float) -> LabDrill:
    sfn = boto3.client("stepfunctions")
    arn = sfn.start_execution(
        stateMachineArn=machine,
        name=f"lab-drill-{int(time.time())}",
        input=json.dumps({**DRILL_INPUT, **request, "cluster": cluster}),
    )["executionArn"]
    deadline = time.monotonic() + FINISH_SECONDS
    described: Any = sfn.describe_execution(executionArn=arn)
    while described["status"] == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.5)
        described = sfn.describe_execution(executionArn=arn)
    history = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    timeline = [e for e in (timeline_entry(dict(event), started) for event in history) if e is not None]
    if described["status"] == "RUNNING":
        sfn.stop_execution(executionArn=arn)
        return LabDrill(
            "TIMED_OUT", None, f"the drill did not end within {FINISH_SECONDS:.0f} s", None, 0, timeline
        )
    report = json.loads(described["output"]) if described.get("output") else None
    return LabDrill(described["status"], report, described.get("error"), None, 0, timeline)


def saved_status(root: Path | None = None) -> dict[str, Any] | None:
    """The lab's embedded stack's status view after its last drill; None when there was none."""
    lab = Lab(root=root) if root else Lab()
    try:
        data = json.loads((lab.paths.root / STATUS_FILE).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
