"""The simulated cluster behind the ``simulated`` command transport.

Each controller has a list of states, one per check: the n-th probe of a controller sees its
n-th state (the last one repeats), so a scenario can show a failover in progress, a
controller coming back, or a flap. The command run is the one the Session document (or the
request's parameters) names, on a :class:`FakeController` made to look like that state.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import boto3

from hyperpod_ha.commands import CommandRequest, CommandResult, CommandTimedOut, TargetUnreachable
from hyperpod_ha_dev.simulation.agent import agent_command_line
from hyperpod_ha_dev.simulation.capture_clock import CaptureClock
from hyperpod_ha_dev.simulation.fake_controller import ControllerIdentity, ControllerState, FakeController

TRANSPORT = "simulated"


@dataclass(frozen=True)
class SimulatedController:
    identity: ControllerIdentity
    instance_id: str
    states: Sequence[ControllerState]


class SimulatedCluster:
    """A :class:`~hyperpod_ha.commands.CommandRunner` answering from fake controllers."""

    transport = TRANSPORT

    def __init__(self, controllers: Sequence[SimulatedController], captures: Path) -> None:
        # Cleanup errors are handled in close(): a probe may still be writing there.
        self._workdir = tempfile.TemporaryDirectory(prefix="hyperpod-ha-sim-", ignore_cleanup_errors=True)
        identities = tuple(c.identity for c in controllers)
        self._controllers = {c.instance_id: c for c in controllers}
        shared_state = Path(self._workdir.name) / "fsx" / "state"
        self._nodes = {
            c.instance_id: FakeController(
                Path(self._workdir.name) / c.identity.name, c.identity, identities, captures, shared_state
            )
            for c in controllers
        }
        self._captures = captures
        self._checks: dict[str, int] = {}
        self._lock = threading.Lock()
        self.probes: list[tuple[str, int]] = []  # (instance id, check number), for the timeline
        self._shown = [state for c in controllers for state in c.states]
        self.anchor_now()

    def anchor_now(self) -> None:
        """The scenario happens now: the newest log line of any state it shows was logged when
        the heartbeat was last written (a second ago; five minutes ago when both are down)."""
        alive = min((state.heartbeat_age_seconds for state in self._shown), default=0)
        self.anchor(self._shown, dt.datetime.now() - dt.timedelta(seconds=alive))

    def anchor(self, states: Iterable[ControllerState], at: dt.datetime) -> None:
        """Move the captured logs so that the newest line ``states`` show was logged ``at``
        (local time, as slurmctld logs); their spacing stays as captured."""
        logs = {state.log for state in states}
        clock = CaptureClock.anchored(((self._captures / log).read_text() for log in logs), at)
        for node in self._nodes.values():
            node.clock = clock

    def run(self, request: CommandRequest) -> CommandResult:
        # sagemaker-cluster:<cluster-id>_<group>-<instance-id>; instance ids are i-<hex>.
        instance_id = request.target[request.target.rfind("-i-") + 1 :]
        controller = self._controllers.get(instance_id)
        if controller is None:
            raise TargetUnreachable(f"no simulated controller behind {request.target}")
        with self._lock:  # a probe sees one consistent state of its node
            check = self._checks.get(instance_id, 0)
            self._checks[instance_id] = check + 1
            self.probes.append((instance_id, check))
            state = self.state_for(controller, check)
            if not state.reachable:
                raise TargetUnreachable(f"TargetNotConnected: {request.target} is not connected (simulated)")
            node = self._nodes[instance_id]
            node.apply(state)
            started = time.monotonic()
            try:
                done = node.run(agent_command_line(request, boto3.client("ssm")), request.deadline_seconds)
            except subprocess.TimeoutExpired as error:
                raise CommandTimedOut(f"the probe ran past {request.deadline_seconds} s") from error
            self.after_command(node)
        return CommandResult(done.stdout, done.stderr, done.returncode, time.monotonic() - started, TRANSPORT)

    def state_for(self, controller: SimulatedController, check: int) -> ControllerState:
        """What the controller shows at its ``check``-th command: its n-th state."""
        return controller.states[min(check, len(controller.states) - 1)]

    def after_command(self, node: FakeController) -> None:
        """Hook for clusters that change on what a command asked (a drill's takeover)."""

    def close(self) -> None:
        for node in self._nodes.values():
            node.close()
        self._workdir.cleanup()
        # A stopped execution's Lambda task already running (moto cannot stop it) may still be
        # probing a node, writing in its tmp: remove what it leaves once it is done, bounded.
        workdir = Path(self._workdir.name)
        for _ in range(100):
            if not workdir.exists():
                return
            time.sleep(0.1)
            shutil.rmtree(workdir, ignore_errors=True)
