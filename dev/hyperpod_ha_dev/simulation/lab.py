"""The workflow's scenarios against the real Slurm lab: real faults, the real workflow, real verdicts.

``hyperpod-ha simulate <scenario> --lab`` (root only) brings the lab up if it is not
(:mod:`hyperpod_lab`), restores it to a clean, healthy baseline, injects a real fault
(SIGKILL or SIGSTOP of a slurmctld, slurmdbd stopped, a controller cut off the network, a
read-only StateSaveLocation, a database secret rotation), triggers the workflow the way
the cluster would (the lifecycle scripts' SNS notification, or an operator run where the
scripts send nothing), and lets the embedded stack run unchanged: its SageMaker cluster
lists the lab's controllers, and the health checks run the very probe HyperPod nodes get,
inside each controller's namespaces, through :class:`LabAgent` (the SSM agent's part).
Afterwards the fault is repaired and the lab left up, clean, for the next scenario.

Failover scenarios report the seconds from the fault to the verdict next to the lab's
SlurmctldTimeout. One lab per machine: every run holds ``/tmp/hyperpod-lab.lock`` (the lab
tests take the same lock).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import fcntl
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final, TypeVar

import boto3

from hyperpod_ha.commands import (
    CommandRequest,
    CommandResult,
    TargetUnreachable,
    register_transport,
)
from hyperpod_ha.observability import logger
from hyperpod_ha.rotation.secret import AWSCURRENT
from hyperpod_ha.rotation.slurmdbd_credentials import CREDENTIAL_SOURCE_ENV
from hyperpod_ha.slurm import (
    SlurmOutputError,
    parse_cluster_registrations,
    parse_ping,
    parse_role_log,
    parse_show_config,
)
from hyperpod_ha.verification_runs import RunSettings, Trigger, VerificationRuns
from hyperpod_ha_dev.embedded.site import SiteController
from hyperpod_ha_dev.simulation.agent import (
    NON_INTERACTIVE_DOCUMENT,
    agent_command_line,
)
from hyperpod_ha_dev.simulation.engine import EmbeddedRun, ScenarioResult, TimelineEntry, embedded_run
from hyperpod_ha_dev.simulation.scenarios import Scenario
from hyperpod_ha_dev.simulation.ticker import WatchdogTicker
from hyperpod_lab import Lab, LabError, LabRunner
from hyperpod_lab.config import SLURMCTLD_PORT
from hyperpod_lab.processes import stopped
from hyperpod_lab.topology import CLUSTER_NAME, SLURMCTLD_TIMEOUT_SECONDS

T = TypeVar("T")

LAB_TRANSPORT: Final = "lab-agent"
LOCK_PATH: Final = Path(tempfile.gettempdir()) / "hyperpod-lab.lock"

# SlurmctldTimeout is 10 s in the lab: no settle wait, a check every 5 s and six checks in
# all, so a run that starts while a failover is still in progress sees it converge.
CONVERGING_PARAMETERS: Final = {"SettleSeconds": 0, "BackoffSeconds": 5, "MaxAttempts": 6}
# A fault that stays (both controllers down, slurmdbd stopped, ...) gives the same verdict
# at every check: two checks show that the run checked again, and keep the lab run short.
PERSISTENT_FAULT_PARAMETERS: Final = {"SettleSeconds": 0, "BackoffSeconds": 5, "MaxAttempts": 2}
# The lab's watchdog schedule ticks faster than the template's fastest rate (1 minute).
WATCHDOG_LAB_PERIOD_SECONDS: Final = 15.0
NOT_VERIFIED: Final = frozenset({"DEGRADED", "SPLIT_BRAIN", "DOWN", "UNKNOWN"})

# A takeover needs SlurmctldTimeout without an answer plus the backup's next check; the
# margin absorbs a loaded two-core machine.
TAKEOVER_WAIT_SECONDS: Final = SLURMCTLD_TIMEOUT_SECONDS + 20
# The active controller beats every min(SlurmctldTimeout/4, 30) s: 2.5 s in the lab.
HEARTBEAT_FRESH_SECONDS: Final = 8.0
TAKE_BACK_SECONDS: Final = 60.0
RESTORE_SECONDS: Final = 45.0


class LabScenarioUnknown(ValueError):
    """No lab scenario has this name. The reason is safe to log."""


class LabScenarioError(RuntimeError):
    """The lab could not be brought to the state a scenario needs. ``reason`` is safe to log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- one lab per machine -------------------------------------------------------------------


class _LabLock:
    """``flock`` on :data:`LOCK_PATH`, re-entrant within this process: the test module holds
    it for all its scenarios, and each scenario takes it again (a second ``flock`` on another
    descriptor of the same process would wait for itself)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._depth = 0
        self._handle: IO[str] | None = None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        with self._guard:
            if self._depth == 0:
                handle = LOCK_PATH.open("w")
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    logger.info("waiting for the lab lock", extra={"lock": str(LOCK_PATH)})
                    fcntl.flock(handle, fcntl.LOCK_EX)
                self._handle = handle
            self._depth += 1
        try:
            yield
        finally:
            with self._guard:
                self._depth -= 1
                if self._depth == 0 and self._handle is not None:
                    self._handle.close()  # closing the descriptor releases the flock
                    self._handle = None


_lab_lock = _LabLock()


def lab_lock() -> contextlib.AbstractContextManager[None]:
    """Hold the machine's lab lock (re-entrant within this process)."""
    return _lab_lock.held()


# --- the SSM agent's part ------------------------------------------------------------------


class NodeSecret:
    """Stands in for a controller's instance role reading the database secret.

    On HyperPod the roll-out's node script runs ``aws secretsmanager get-secret-value`` itself.
    The lab's nodes cannot reach the in-process Secrets Manager, so for the length of one
    request that names a ``secretId``, its AWSCURRENT value sits in a root-only file (mode
    600 in a directory of mode 700) that the node script reads with ``cat`` through
    ``SLURMDBD_SECRET_COMMAND``; the file is removed as soon as the request ends.
    """

    def __init__(self) -> None:
        self._directory = Path(tempfile.mkdtemp(prefix="hyperpod-ha-lab-"))
        self.path = self._directory / "secret.json"

    @property
    def command(self) -> str:
        return f"cat {self.path}"

    @contextlib.contextmanager
    def serving(self, secret_id: str | None) -> Iterator[None]:
        if secret_id is None:
            yield
            return
        value = boto3.client("secretsmanager").get_secret_value(SecretId=secret_id, VersionStage=AWSCURRENT)
        descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(value["SecretString"])
        try:
            yield
        finally:
            self.path.unlink(missing_ok=True)

    def close(self) -> None:
        shutil.rmtree(self._directory, ignore_errors=True)


class LabAgent:
    """The ``lab-agent`` command transport: requests as the stack sends them to SSM (its own
    Session documents included), run on the lab's hosts by :class:`~hyperpod_lab.LabRunner`.

    Handlers cache their runner per container, so one agent serves every scenario; a
    scenario attaches its lab while it runs.
    """

    transport = LAB_TRANSPORT

    def __init__(self) -> None:
        self._runner: LabRunner | None = None
        self._secret: NodeSecret | None = None

    @contextlib.contextmanager
    def attached(self, lab: Lab, secret: NodeSecret) -> Iterator[None]:
        self._runner = LabRunner(lab, environment={CREDENTIAL_SOURCE_ENV: secret.command})
        self._secret = secret
        try:
            yield
        finally:
            self._runner = None
            self._secret = None

    def run(self, request: CommandRequest) -> CommandResult:
        runner, secret = self._runner, self._secret
        if runner is None or secret is None:
            raise TargetUnreachable("no lab is attached to the lab agent")
        line = agent_command_line(request, boto3.client("ssm"))
        secret_id = next(iter(request.parameters.get("secretId", [])), None)
        with secret.serving(secret_id):
            return runner.run(
                CommandRequest(
                    request.target, NON_INTERACTIVE_DOCUMENT, request.deadline_seconds, {"command": [line]}
                )
            )


_agent = LabAgent()
register_transport(LAB_TRANSPORT, lambda: _agent)


def attached_agent(lab: Lab, secret: NodeSecret) -> contextlib.AbstractContextManager[None]:
    """The ``lab-agent`` transport serving ``lab`` for the length of the block."""
    return _agent.attached(lab, secret)


# --- the lab's state: what clean means, and getting back there --------------------------------


def _poll(check: Callable[[], T | None], timeout: float, interval: float = 0.2) -> T | None:
    """The first non-None answer of ``check`` within ``timeout`` seconds, else None."""
    deadline = time.monotonic() + timeout
    while True:
        answer = check()
        if answer is not None:
            return answer
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


def _controllers(lab: Lab) -> list[str]:
    return [host.name for host in lab.topology.controller_hosts]


def last_role(lab: Lab, host: str, offset: int = 0) -> str | None:
    """The last role line in ``host``'s slurmctld log (from ``offset``): primary, standby, ..."""
    last = parse_role_log(lab.log(host)[offset:]).last
    return last.event if last else None


def _running(lab: Lab, host: str, daemon: str) -> bool:
    pid = lab.pid(host, daemon)
    return pid is not None and not stopped(pid)


def _heartbeat_problem(lab: Lab, writer: int) -> str | None:
    beat = lab.heartbeat()
    if beat is None:
        return "no heartbeat file"
    age = time.time() - beat.beat_time
    if beat.writer_index != writer or age > HEARTBEAT_FRESH_SECONDS:
        return f"heartbeat last written {age:.0f} s ago by controller #{beat.writer_index}"
    return None


def _registered(lab: Lab, host: str) -> bool:
    """Whether ``host``'s slurmdbd answers and has a controller registered for the cluster."""
    try:
        done = lab.exec(
            host,
            ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster,controlhost,controlport"],
            timeout=10,
        )
    except (subprocess.TimeoutExpired, LabError):
        return False
    if done.returncode != 0:
        return False
    try:
        rows = parse_cluster_registrations(done.stdout)
    except SlurmOutputError:
        return False
    return any(
        row.cluster == CLUSTER_NAME and row.control_host and row.control_port == SLURMCTLD_PORT
        for row in rows
    )


def _dbd_answers(lab: Lab, host: str) -> bool:
    try:
        done = lab.exec(host, ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster"], timeout=10)
    except (subprocess.TimeoutExpired, LabError):
        return False
    return done.returncode == 0


def _isolated(lab: Lab) -> list[str]:
    hosts = lab.status().get("hosts")
    if not isinstance(hosts, dict):
        return []
    return [name for name, host in hosts.items() if isinstance(host, dict) and host.get("isolated")]


def _state_read_only(lab: Lab) -> bool:
    return lab.status().get("state_read_only") is True


def _heartbeat_hidden(lab: Lab) -> list[str]:
    hidden = lab.status().get("heartbeat_hidden_hosts")
    return [str(name) for name in hidden] if isinstance(hidden, list) else []


def baseline_problems(lab: Lab) -> list[str]:
    """Why the lab is not in its clean baseline (empty when it is): every host connected and
    running its daemons, the first controller active (log and heartbeat), the others in
    standby, every controller answering ping, a controller registered with every slurmdbd,
    every compute node idle."""
    if not lab.is_up():
        return ["the lab is not up"]
    problems = [f"{name} is cut off the network" for name in _isolated(lab)]
    if _state_read_only(lab):
        problems.append("StateSaveLocation is read-only")
    problems += [f"{name} cannot read the heartbeat" for name in _heartbeat_hidden(lab)]
    for host in lab.topology.hosts:
        problems += [
            f"{daemon} does not run on {host.name}"
            for daemon in host.daemons
            if not _running(lab, host.name, daemon)
        ]
    if problems:
        return problems
    primary, *others = _controllers(lab)
    if (role := last_role(lab, primary)) != "primary":
        problems.append(f"{primary} last logged {role!r}, not 'Running as primary controller'")
    problems += [
        f"{name} last logged {role!r}, not standby"
        for name in others
        if (role := last_role(lab, name)) != "standby"
    ]
    if (beat := _heartbeat_problem(lab, writer=0)) is not None:
        problems.append(beat)
    try:
        ping = parse_ping(lab.client(["scontrol", "ping"], timeout=15).stdout)
    except (SlurmOutputError, subprocess.TimeoutExpired):
        ping = []
    answering = {line.host for line in ping if line.responding}
    problems += [f"{name} does not answer ping" for name in [primary, *others] if name not in answering]
    problems += [
        f"no controller registered with {name}'s slurmdbd"
        for name in [primary, *others]
        if not _registered(lab, name)
    ]
    states = _node_states(lab)
    problems += [
        f"{host.name} is {states.get(host.name, 'not listed')}, not idle"
        for host in lab.topology.compute_hosts
        if states.get(host.name) != "idle"
    ]
    return problems


def _node_states(lab: Lab) -> dict[str, str]:
    """Compute node -> state as the active controller reports it (``down*``, ``idle``, ...)."""
    try:
        nodes = lab.client(["sinfo", "-h", "-N", "-o", "%N %T"], timeout=15)
    except subprocess.TimeoutExpired:
        return {}
    return {words[0]: words[1] for words in map(str.split, nodes.stdout.splitlines()) if len(words) == 2}


def _primary_serves(lab: Lab, primary: str) -> bool:
    return (
        _running(lab, primary, "slurmctld")
        and last_role(lab, primary) == "primary"
        and _heartbeat_problem(lab, writer=0) is None
    )


def _stop_slurmctld(lab: Lab, host: str) -> None:
    pid = lab.pid(host, "slurmctld")
    if pid is None:
        return
    # A stopped (hung) process would not handle SIGTERM until continued; SIGKILL ends it.
    with contextlib.suppress(LabError):
        lab.kill_slurmctld(host, signal.SIGKILL if stopped(pid) else signal.SIGTERM)


def restore_lab(lab: Lab, timeout: float = RESTORE_SECONDS) -> list[str]:
    """Repair whatever a scenario left (idempotent) and wait for the clean baseline.

    Returns what was repaired; raises :class:`LabScenarioError` when the baseline does not
    come back within ``timeout``.
    """
    repairs: list[str] = []
    if _state_read_only(lab):
        lab.restore_state_writable()
        repairs.append("StateSaveLocation writable again")
    for name in _heartbeat_hidden(lab):
        lab.show_heartbeat(name)
        repairs.append(f"{name} reads the heartbeat again")
    for name in _isolated(lab):
        lab.reconnect(name)
        repairs.append(f"{name} reconnected")
    primary, *others = _controllers(lab)
    # Backups first: a slurmdbd that starts asks its own host's slurmctld to register again.
    for name in [*others, primary]:
        if lab.pid(name, "slurmdbd") is None:
            lab.start_slurmdbd(name)
            repairs.append(f"slurmdbd started on {name}")
    repairs += _restore_controllers(lab, primary, others)
    _poll(lambda: True if _primary_serves(lab, primary) else None, timeout)
    if _poll(lambda: True if _registered(lab, primary) else None, 5) is None:
        # Only a (re)start of the active slurmctld registers it with slurmdbd again.
        lab.kill_slurmctld(primary, signal.SIGTERM)
        lab.start_slurmctld(primary)
        repairs.append(f"slurmctld on {primary} restarted to register with slurmdbd again")
    resumed: set[str] = set()
    cancelled: set[str] = set()

    def clean() -> bool | None:
        states = _node_states(lab)
        # A node the controller lost for SlurmdTimeout is DOWN; ReturnToService brings it back
        # only after the controller's next, infrequent check (about two minutes here). Nodes
        # are marked one by one, also just after the network came back: resume them as they go.
        down = sorted(node for node, state in states.items() if state.startswith(("down", "drain")))
        if down:
            lab.client(["scontrol", "update", f"NodeName={','.join(down)}", "State=RESUME"], timeout=15)
            resumed.update(down)
            return None
        # A controller killed moments after a job ended may not have saved that: the next
        # one recovers the job as running. No scenario leaves a job of its own behind.
        if any(state.startswith(("alloc", "mix")) for state in states.values()):
            jobs = set(lab.client(["squeue", "-h", "-o", "%i"], timeout=15).stdout.split()) - cancelled
            if jobs:
                lab.client(["scancel", *sorted(jobs)], timeout=15)
                cancelled.update(jobs)
            return None
        return None if baseline_problems(lab) else True

    finished = _poll(clean, timeout, interval=0.5)
    if resumed:
        repairs.append(f"{', '.join(sorted(resumed))} resumed")
    if cancelled:
        repairs.append(f"left-over job(s) {', '.join(sorted(cancelled))} cancelled")
    if finished is None:
        remaining = baseline_problems(lab)
        if remaining:
            raise LabScenarioError("the lab did not return to its baseline: " + "; ".join(remaining[:4]))
    return repairs


def _restore_controllers(lab: Lab, primary: str, others: Sequence[str]) -> list[str]:
    if _running(lab, primary, "slurmctld") and last_role(lab, primary) == "primary":
        # Still in control: a heartbeat that paused (StateSaveLocation was read-only) resumes.
        _poll(lambda: True if _primary_serves(lab, primary) else None, HEARTBEAT_FRESH_SECONDS)
    if not _primary_serves(lab, primary):
        # Starting the primary while a backup is still taking over gives two active
        # controllers for a while: stop them all, then start the primary first.
        for name in [*others, primary]:
            _stop_slurmctld(lab, name)
        lab.start_slurmctld(primary)
        for name in others:
            lab.start_slurmctld(name)
        return [f"slurmctld restarted on every controller, {primary} first"]
    repairs = []
    for name in others:
        if not _running(lab, name, "slurmctld"):
            _stop_slurmctld(lab, name)
            lab.start_slurmctld(name)
            repairs.append(f"slurmctld restarted on {name}")
    return repairs


# --- one scenario's run ----------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """Something a lab scenario verified beyond the verdict."""

    name: str
    passed: bool
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


def on_message(address: str) -> str:
    """What SlurmctldPrimaryOnProg publishes (the comma after ON is really there)."""
    return f"Slurm Controller is ON, ({address}, Primary Node)"


def off_message(address: str, role: str = "Primary") -> str:
    return f"Slurm Controller is OFF ({address}, {role} Node)"


class Drill:
    """A scenario in progress: the lab, the embedded run, and what happened when."""

    def __init__(self, lab: Lab, run: EmbeddedRun, scenario: LabScenario) -> None:
        self.lab = lab
        self.run = run
        self.scenario = scenario
        self.entries: list[TimelineEntry] = []
        self.checks: list[Check] = []
        self.fault: str | None = None
        self.fault_at: float | None = None
        self.takeover_seconds: float | None = None
        self.details: dict[str, Any] = {}
        self.offsets: dict[str, int] = {}  # log offsets a check after the workflow reads from
        self.controllers = _controllers(lab)
        self.primary, self.backup = self.controllers[:2]

    def address(self, host: str) -> str:
        return self.lab.topology.host(host).address

    def note(self, what: str, detail: str = "", at: float | None = None) -> None:
        self.entries.append(
            TimelineEntry((at if at is not None else time.time()) - self.run.started, what, detail)
        )

    def check(self, name: str, passed: bool, detail: str = "") -> None:
        self.checks.append(Check(name, passed, detail))
        self.note(
            "  lab check", f"{'ok' if passed else 'FAILED'}: {name}" + (f" ({detail})" if detail else "")
        )

    def inject(self, what: str, action: Callable[[], object]) -> None:
        self.fault = what
        self.fault_at = time.time()
        action()
        self.note("fault", what, at=self.fault_at)

    def notify(self, message: str) -> None:
        """Publish what a lifecycle script would, on the cluster's failover topic."""
        self.run.notify(message)
        self.note("lifecycle script publishes", message)

    def operator_run(self, reason: str) -> None:
        """Start a verification as ``hyperpod-ha runbook start`` does (no notification exists
        for this fault: the lifecycle scripts only report controllers turning ON or OFF)."""
        stack = self.run.stack
        parameters = stack.parameters  # the scenario's, or the template's defaults
        runs = VerificationRuns(
            boto3.client("dynamodb"),
            boto3.client("stepfunctions"),
            stack.ref("StateTable"),
            str(stack.outputs["FailoverVerificationStateMachineArn"]),
            RunSettings(
                settle_seconds=int(parameters["SettleSeconds"]),
                max_attempts=int(parameters["MaxAttempts"]),
                backoff_seconds=int(parameters["BackoffSeconds"]),
                lease_seconds=3600,
            ),
        )
        now = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        decision = runs.start_or_join(
            str(stack.parameters["ClusterName"]),
            Trigger("operator", uuid.uuid4().hex, {"reason": reason}, now),
            reason,
        )
        self.note("operator run", f"{decision.outcome}: {reason}")

    def log_offset(self, host: str) -> int:
        return len(self.lab.log(host))

    def wait_for_role(self, host: str, offset: int, role: str, timeout: float) -> float | None:
        """When ``host`` logged ``role`` after ``offset`` (epoch seconds), or None."""

        def logged() -> float | None:
            lines = parse_role_log(self.lab.log(host)[offset:]).lines
            return time.time() if any(line.event == role for line in lines) else None

        return _poll(logged, timeout, interval=0.1)

    def notify_after_takeover(self, host: str, offset: int) -> None:
        """SlurmctldPrimaryOnProg runs when the backup becomes the primary: publish then."""
        seen = self.wait_for_role(host, offset, "primary", TAKEOVER_WAIT_SECONDS)
        if seen is None:
            self.note(
                "no takeover",
                f"{host} did not log 'Running as primary controller' within {TAKEOVER_WAIT_SECONDS} s",
            )
        else:
            if self.fault_at is not None:
                self.takeover_seconds = seen - self.fault_at
            self.note(
                f"{host} took over",
                f"logged 'Running as primary controller' {seen - (self.fault_at or seen):.1f} s "
                "after the fault",
                at=seen,
            )
        self.notify(on_message(self.address(host)))


Inject = Callable[[Drill], None]
Verify = Callable[[Drill, ScenarioResult], None]


@dataclass(frozen=True)
class LabScenario:
    name: str
    summary: str
    inject: Inject  # the fault (or the rotation) and the trigger the cluster would send
    expect_verdicts: frozenset[str]
    expect_label: str  # how the expectation reads in the timeline and JSON
    expect_incidents: int
    parameters: Mapping[str, int] = field(default_factory=lambda: dict(CONVERGING_PARAMETERS))
    precondition: Callable[[Lab], str] | None = None  # before the stack exists; says what it did
    verify: Verify | None = None  # after the workflow, before the repair
    measured: bool = False  # report the seconds from the fault to the verdict
    why: str = ""  # why this verdict is the right one, where that is not obvious
    controllers: int = 2  # the lab's controller group for this scenario
    min_slurm: str | None = None  # the oldest Slurm series that shows it (e.g. "24.11")
    # Where a Slurm release ends otherwise: series -> (verdicts, label, incidents, why).
    by_release: Mapping[str, tuple[frozenset[str], str, int, str]] = field(default_factory=dict)

    def on(self, series: str) -> LabScenario:
        """The scenario as it ends on ``series``."""
        if series not in self.by_release:
            return self
        verdicts, label, incidents, why = self.by_release[series]
        return dataclasses.replace(
            self, expect_verdicts=verdicts, expect_label=label, expect_incidents=incidents, why=why
        )


# --- the scenarios -------------------------------------------------------------------------------


def _kill_primary(drill: Drill) -> None:
    offset = drill.log_offset(drill.backup)
    drill.inject(
        f"SIGKILL slurmctld on {drill.primary} (the primary)", lambda: drill.lab.kill_slurmctld(drill.primary)
    )
    drill.notify_after_takeover(drill.backup, offset)


def _failed_over(lab: Lab) -> str:
    """Precondition of ``back``: the primary killed and the backup in control and serving."""
    primary, backup = _controllers(lab)[:2]
    offset = len(lab.log(backup))
    lab.kill_slurmctld(primary)

    def serving() -> bool | None:
        if last_role(lab, backup, offset) != "primary":
            return None
        try:
            ping = parse_ping(lab.exec(backup, ["scontrol", "ping"], timeout=10).stdout)
        except (SlurmOutputError, subprocess.TimeoutExpired):
            return None
        states = {line.host: line.responding for line in ping}
        return True if states.get(backup) and states.get(primary) is False else None

    if _poll(serving, TAKEOVER_WAIT_SECONDS) is None:
        raise LabScenarioError(f"{backup} did not take over from {primary} within {TAKEOVER_WAIT_SECONDS} s")
    return f"{primary}'s slurmctld killed; {backup} took over and serves"


def _start_primary(drill: Drill) -> None:
    lab, primary, backup = drill.lab, drill.primary, drill.backup
    offsets = {name: drill.log_offset(name) for name in (primary, backup)}
    drill.inject(f"slurmctld on {primary} started again", lambda: lab.start_slurmctld(primary, wait=False))
    # The primary's ON program runs when it has control again; the backup's OFF program
    # when it is back in standby: the usual burst of a restart. (24.11 took up to 30 s here
    # to take control back: the active backup saves its state and steps down first.)
    if drill.wait_for_role(primary, offsets[primary], "primary", TAKE_BACK_SECONDS) is not None:
        drill.note(f"{primary} took control back", "logged 'Running as primary controller'")
    drill.notify(on_message(drill.address(primary)))
    if drill.wait_for_role(backup, offsets[backup], "standby", 20) is not None:
        drill.notify(off_message(drill.address(backup), "Backup"))


def _stop_primary(drill: Drill) -> None:
    offset = drill.log_offset(drill.backup)
    drill.inject(
        f"SIGSTOP slurmctld on {drill.primary} (hung: the process stays, answers nothing)",
        lambda: drill.lab.stop_slurmctld(drill.primary),
    )
    drill.notify_after_takeover(drill.backup, offset)


def _stop_both(drill: Drill) -> None:
    lab = drill.lab

    def stop() -> None:
        # The backup first: with the primary gone first, it would take over.
        lab.kill_slurmctld(drill.backup, signal.SIGTERM)
        lab.kill_slurmctld(drill.primary, signal.SIGTERM)

    drill.inject(f"SIGTERM slurmctld on {drill.backup}, then on {drill.primary}", stop)
    # SlurmctldPrimaryOffProg runs on the primary when it shuts down.
    drill.notify(off_message(drill.address(drill.primary)))


def _stop_both_silently(drill: Drill) -> None:
    """Both slurmctld stopped and nothing published (an FSx outage silences the ON/OFF
    programs): only the watchdog's schedule, ticking here every WATCHDOG_LAB_PERIOD_SECONDS
    with its own phase, can find it."""
    lab, period = drill.lab, WATCHDOG_LAB_PERIOD_SECONDS

    def stop() -> None:
        lab.kill_slurmctld(drill.backup, signal.SIGTERM)
        lab.kill_slurmctld(drill.primary, signal.SIGTERM)

    with WatchdogTicker(drill.run.stack, period) as ticker:
        # The fault lands inside a period, after at least one tick found the lab healthy.
        time.sleep(period * (1 + secrets.randbelow(60) / 100))
        drill.inject(f"SIGTERM slurmctld on {drill.backup}, then on {drill.primary}; nothing published", stop)
        found = ticker.wait_for_run(timeout=3 * period + 60)
    before = [tick for tick in ticker.ticks if drill.fault_at is None or tick.at < drill.fault_at]
    drill.check(
        "the watchdog's ticks before the fault started nothing",
        bool(before) and all(tick.outcome == "verified" for tick in before),
        ", ".join(f"{tick.outcome} ({tick.verdict})" for tick in before),
    )
    if found is None or drill.fault_at is None:
        drill.check(f"the watchdog found the fault within one period ({period:.0f} s)", False, "no run")
        return
    after = found.at - drill.fault_at
    drill.details["watchdog_period_seconds"] = period
    drill.details["fault_to_watchdog_tick_seconds"] = round(after, 1)
    drill.note("the watchdog found it", f"tick {after:.1f} s after the fault: {found.verdict}", at=found.at)
    drill.check(
        f"the watchdog found the fault within one period ({period:.0f} s)",
        0 <= after <= period,
        f"{after:.1f} s",
    )


def _stop_slurmdbd(drill: Drill) -> None:
    lab = drill.lab
    drill.inject("SIGTERM slurmdbd on every controller", lab.stop_slurmdbd)
    job = lab.client(["srun", "-J", "hpha-dbd-down", "--nodes=1", "hostname"], timeout=30)
    drill.check(
        "a job runs while slurmdbd is down (scheduling goes on)", job.returncode == 0, job.stdout.strip()
    )
    drill.operator_run("slurmdbd stopped on every controller")


def _isolate_primary(drill: Drill) -> None:
    drill.offsets[drill.backup] = drill.log_offset(drill.backup)
    drill.inject(
        f"{drill.primary} cut off the network (its slurmctld keeps running)",
        lambda: drill.lab.isolate(drill.primary),
    )
    drill.operator_run(f"{drill.primary} does not answer")


def _no_takeover(drill: Drill, result: ScenarioResult) -> None:
    beat = drill.lab.heartbeat()
    fresh = (
        beat is not None
        and beat.writer_index == 0
        and time.time() - beat.beat_time <= HEARTBEAT_FRESH_SECONDS
    )
    drill.check(
        f"the heartbeat stays fresh, written by {drill.primary}",
        fresh,
        "no heartbeat"
        if beat is None
        else f"writer #{beat.writer_index}, {time.time() - beat.beat_time:.0f} s old",
    )
    roles = {
        line.event
        for line in parse_role_log(drill.lab.log(drill.backup)[drill.offsets.get(drill.backup, 0) :]).lines
    }
    drill.check(
        f"{drill.backup} did not take over",
        not roles & {"taking_over", "primary"},
        f"role lines logged: {sorted(roles) or 'none'}",
    )


def _state_unwritable(drill: Drill) -> None:
    drill.offsets[drill.primary] = drill.log_offset(drill.primary)
    drill.inject("StateSaveLocation made read-only on every controller", drill.lab.make_state_unwritable)
    drill.operator_run("StateSaveLocation rejects writes")


def _unwritable_seen(drill: Drill, result: ScenarioResult) -> None:
    log = drill.lab.log(drill.primary)[drill.offsets.get(drill.primary, 0) :]
    drill.check(f"{drill.primary}'s slurmctld still runs", _running(drill.lab, drill.primary, "slurmctld"))
    drill.check(
        f"{drill.primary} logged that it cannot write the heartbeat", "heartbeat file creation failed" in log
    )
    verdict = final_verdict_detail(result)
    drill.check(
        "the verdict names the unwritable StateSaveLocation", "not writable" in verdict, verdict[:200]
    )


SCENARIO_LIST: Final = (
    LabScenario(
        "failover",
        "SIGKILL of ctl1's slurmctld; ctl2 takes over after SlurmctldTimeout",
        _kill_primary,
        frozenset({"FAILED_OVER"}),
        "FAILED_OVER",
        0,
        measured=True,
    ),
    LabScenario(
        "back",
        "after a failover, ctl1's slurmctld starts again and takes control back",
        _start_primary,
        frozenset({"HEALTHY"}),
        "HEALTHY",
        0,
        precondition=_failed_over,
        by_release={
            "24.11": (
                frozenset({"DEGRADED"}),
                "DEGRADED",
                1,
                "ctl1 takes control back (after about 30 s: ctl2 saves its state and steps down first), "
                "but slurmdbd's registration of the cluster's controller is blank afterwards (ControlHost "
                "empty; seen in both 24.11 runs here that took control back: back, back-3). "
                "Every controller's slurmdbd shares one database "
                "row: likely the stepping-down backup's deregistration lands after the primary's "
                "registration (not proven). A restart of the active slurmctld registers it again",
            )
        },
    ),
    LabScenario(
        "hung-primary",
        "SIGSTOP of ctl1's slurmctld; ctl2 takes over after SlurmctldTimeout, clients still wait on ctl1",
        _stop_primary,
        frozenset({"DEGRADED"}),
        "DEGRADED",
        1,
        # The takeover is over when the run starts; what stays wrong stays wrong (seen for
        # 90 s and more): three checks show it.
        parameters={**CONVERGING_PARAMETERS, "MaxAttempts": 3},
        measured=True,
        why=(
            "ctl2 takes over after SlurmctldTimeout, but the stopped slurmctld's socket still accepts "
            "connections (the kernel completes them), so every Slurm client (sinfo, squeue, srun, on the "
            "login host and on ctl2 itself) connects to the first SlurmctldHost, waits MessageTimeout "
            "and fails with 'Socket timed out' instead of trying ctl2: Slurm's clients only move on "
            "when the connection is refused. An active controller nobody can use is DEGRADED, not a "
            "verified failover; it lasts until ctl1 is killed or continued"
        ),
    ),
    LabScenario(
        "both-down",
        "both slurmctld stopped",
        _stop_both,
        frozenset({"DOWN"}),
        "DOWN",
        1,
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
        measured=True,
    ),
    LabScenario(
        "silent-failure",
        "both slurmctld stopped and nothing published; the watchdog's next tick finds it",
        _stop_both_silently,
        frozenset({"DOWN"}),
        "DOWN",
        1,
        parameters={**PERSISTENT_FAULT_PARAMETERS, "WatchdogRateMinutes": 1},
        measured=True,
    ),
    LabScenario(
        "slurmdbd-down",
        "slurmdbd stopped on every controller; scheduling goes on",
        _stop_slurmdbd,
        frozenset({"DEGRADED"}),
        "DEGRADED",
        1,
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
    ),
    LabScenario(
        "isolated-primary",
        "ctl1 cut off the network: its heartbeat stays fresh, so ctl2 never takes over",
        _isolate_primary,
        NOT_VERIFIED,
        "neither HEALTHY nor FAILED_OVER",
        1,
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
        verify=_no_takeover,
        why=(
            "ctl1 cannot be reached and ctl2 sees it DOWN, but ctl1 keeps writing the heartbeat on the "
            "shared state: no backup takes over while it is fresh, so no reachable controller is "
            "active (a network partition, not a failover)"
        ),
    ),
    LabScenario(
        "state-unwritable",
        "StateSaveLocation read-only, as a failing FSx would be; ctl1 keeps serving",
        _state_unwritable,
        frozenset({"DEGRADED"}),
        "DEGRADED",
        1,
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
        verify=_unwritable_seen,
        why=(
            "ctl1 stays active and keeps answering and scheduling, so the cluster is not DOWN; but no "
            "controller can create a file in StateSaveLocation (Read-only file system): slurmctld can save "
            "neither its state nor its heartbeat, so a failover now would lose state. A serving cluster "
            "missing something it needs is DEGRADED, and the run opens an incident"
        ),
    ),
)
LAB_SCENARIOS: Final[dict[str, LabScenario]] = {s.name: s for s in SCENARIO_LIST}


# --- results -----------------------------------------------------------------------------------


def final_verdict_detail(result: ScenarioResult) -> str:
    """The last verdict line of the run's timeline ("<VERDICT> (<next>): <reasons>")."""
    entries = [e for e in result.timeline if e.what.strip() == "verdict"]
    return entries[-1].detail if entries else ""


def _verdicts_at(result: ScenarioResult, started: float) -> list[float]:
    """When each "Decide the verdict" state ended (epoch seconds), in order."""
    return [started + e.seconds for e in result.timeline if e.what.strip() == "verdict"]


@dataclass
class LabScenarioResult(ScenarioResult):
    """A lab scenario's outcome: the workflow's result (the base class, so the CLI renders both
    alike) plus what the lab measured and checked. ``scenario`` is the engine's view of it."""

    lab_scenario: LabScenario = field(kw_only=True)
    fault: str | None = field(default=None, kw_only=True)
    checks: list[Check] = field(default_factory=list, kw_only=True)
    # To the end of the check that gave the final verdict, and of the first check.
    fault_to_verdict_seconds: float | None = field(default=None, kw_only=True)
    fault_to_first_verdict_seconds: float | None = field(default=None, kw_only=True)
    takeover_seconds: float | None = field(default=None, kw_only=True)
    slurmctld_timeout_seconds: int | None = field(default=None, kw_only=True)
    details: dict[str, Any] = field(default_factory=dict, kw_only=True)

    @property
    def passed(self) -> bool:
        expected = self.lab_scenario
        return (
            self.verdict in expected.expect_verdicts
            and len(self.incidents) == expected.expect_incidents
            and len(self.snapshots) == 1
            and len(self.executions) == 1
            and self.execution_ended_as_expected
            and self.lease_released
            and all(check.passed for check in self.checks)
        )

    @property
    def execution_ended_as_expected(self) -> bool:
        """A verified run succeeds; any other ends failed with its verdict as the error."""
        wanted = (
            ("SUCCEEDED", None) if self.verdict in ("HEALTHY", "FAILED_OVER") else ("FAILED", self.verdict)
        )
        return all((e.get("status"), e.get("error")) == wanted for e in self.executions)

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        expected = self.lab_scenario
        data.update(
            {
                "lab": True,
                "summary": expected.summary,
                "fault": self.fault,
                "expected": {
                    "verdict": expected.expect_label,
                    "verdicts": sorted(expected.expect_verdicts),
                    "incidents": expected.expect_incidents,
                    "snapshots": 1,
                    "executions": 1,
                },
                "checks": [check.to_json() for check in self.checks],
                "fault_to_verdict_seconds": _rounded(self.fault_to_verdict_seconds),
                "fault_to_first_verdict_seconds": _rounded(self.fault_to_first_verdict_seconds),
                "takeover_seconds": _rounded(self.takeover_seconds),
                "slurmctld_timeout_seconds": self.slurmctld_timeout_seconds,
            }
        )
        if expected.why:
            data["why"] = expected.why
        data.update(self.details)
        return data


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _slurmctld_timeout(lab: Lab) -> int | None:
    done = lab.client(["scontrol", "show", "config"], timeout=15)
    try:
        return parse_show_config(done.stdout).slurmctld_timeout if done.returncode == 0 else None
    except SlurmOutputError:
        return None


def _ready(lab: Lab) -> list[str]:
    """Bring the lab up (reused when it runs) and to its baseline; rebuild it as a last resort."""
    lab.up()
    try:
        return restore_lab(lab)
    except (LabScenarioError, LabError) as problem:
        reason = problem.reason
    logger.warning("the lab did not come back to its baseline: rebuilding it", extra={"reason": reason})
    lab.down()
    lab.up()
    return [f"rebuilt the lab ({reason})", *restore_lab(lab)]


def run_lab_scenario(name: str, root: Path, *, lab: Lab | None = None) -> ScenarioResult:
    """``hyperpod-ha simulate <name> --lab``: :func:`run_lab`, typed as the simulated scenarios'
    result so the command treats both alike (it is a :class:`LabScenarioResult`)."""
    return run_lab(name, root, lab=lab)


def run_lab(name: str, root: Path, *, lab: Lab | None = None, defaults: bool = False) -> LabScenarioResult:
    """Run one lab scenario end to end (root only); the lab is left up and clean.

    ``defaults``: the stack with the template's default parameters, nothing overridden (the
    benchmark's setting); otherwise the scenario's parameters over the quick run settings."""
    scenario = LAB_SCENARIOS.get(name)
    if scenario is None:
        raise LabScenarioUnknown(f"no lab scenario {name!r}; known: {', '.join(LAB_SCENARIOS)}")
    lab = lab_for(scenario, lab or Lab())
    scenario = scenario.on(lab.topology.slurm)
    with lab_lock():
        prepared = _ready(lab)
        slurmctld_timeout = _slurmctld_timeout(lab)
        controllers = [
            SiteController(c["instance_id"], c["private_ip"], c["hostname"]) for c in lab.controllers()
        ]
        secret = NodeSecret()
        try:
            before = scenario.precondition(lab) if scenario.precondition else None
            with (
                _agent.attached(lab, secret),
                embedded_run(
                    root,
                    controllers,
                    LAB_TRANSPORT,
                    {} if defaults else scenario.parameters,
                    fast=not defaults,
                ) as run,
            ):
                drill = Drill(lab, run, scenario)
                if prepared:
                    drill.note("lab restored before the scenario", "; ".join(prepared), at=run.started)
                if before:
                    drill.note("before the fault", before, at=run.started)
                logger.info("lab scenario starts", extra={"scenario": name})
                scenario.inject(drill)
                workflow = run.finish(_engine_scenario(scenario))
                if scenario.verify is not None:
                    scenario.verify(drill, workflow)
        finally:
            secret.close()
            repairs = restore_lab(lab)
        drill.note("lab repaired", "; ".join(repairs) or "nothing to repair")
        drill.note("the lab stays up", "`python -m hyperpod_lab down` removes it")
        return _result(drill, workflow, slurmctld_timeout)


def _series(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def lab_for(scenario: LabScenario, lab: Lab) -> Lab:
    """The lab the scenario needs: ``lab`` itself, or one like it with the scenario's controllers."""
    if scenario.min_slurm and _series(lab.topology.slurm) < _series(scenario.min_slurm):
        raise LabScenarioError(
            f"{scenario.name} needs Slurm {scenario.min_slurm} or newer; this lab runs {lab.topology.slurm}"
        )
    if lab.topology.controllers == scenario.controllers:
        return lab
    return Lab(dataclasses.replace(lab.topology, controllers=scenario.controllers), admin=lab.admin)


def _engine_scenario(scenario: LabScenario) -> Scenario:
    return Scenario(
        name=scenario.name,
        summary=scenario.summary,
        ctl1=(),
        ctl2=(),
        notification="",
        expect_verdict=scenario.expect_label,
        expect_incidents=scenario.expect_incidents,
        parameters=dict(scenario.parameters),
    )


def _result(drill: Drill, workflow: ScenarioResult, slurmctld_timeout: int | None) -> LabScenarioResult:
    fault_to_verdict = fault_to_first = None
    verdicts = _verdicts_at(workflow, drill.run.started)
    if drill.scenario.measured and drill.fault_at is not None and verdicts:
        fault_to_first = verdicts[0] - drill.fault_at
        fault_to_verdict = verdicts[-1] - drill.fault_at
        takeover = f", takeover after {drill.takeover_seconds:.1f} s" if drill.takeover_seconds else ""
        drill.note(
            "fault to verdict",
            f"{fault_to_verdict:.1f} s (SlurmctldTimeout {slurmctld_timeout} s{takeover}; "
            f"first verdict after {fault_to_first:.1f} s, {len(verdicts)} check(s))",
            at=verdicts[-1],
        )
    result = LabScenarioResult(
        scenario=workflow.scenario,
        verdict=workflow.verdict,
        incidents=workflow.incidents,
        snapshots=workflow.snapshots,
        executions=workflow.executions,
        lease_released=workflow.lease_released,
        timeline=sorted([*workflow.timeline, *drill.entries], key=lambda e: e.seconds),
        lab_scenario=drill.scenario,
        fault=drill.fault,
        checks=list(drill.checks),
        fault_to_verdict_seconds=fault_to_verdict,
        fault_to_first_verdict_seconds=fault_to_first,
        takeover_seconds=drill.takeover_seconds,
        slurmctld_timeout_seconds=slurmctld_timeout,
        details=dict(drill.details),
    )
    logger.info(
        "lab scenario done",
        extra={
            "scenario": drill.scenario.name,
            "verdict": result.verdict,
            "passed": result.passed,
            "fault_to_verdict_seconds": _rounded(fault_to_verdict),
        },
    )
    return result


# Scenarios of their own modules (the rotation, three controllers, 24.11's refused takeover)
# join the list here,
# once everything they use above is defined.
from hyperpod_ha_dev.simulation.lab_rotation import LAB_SLURMDBD_CONF, rotation_scenario  # noqa: E402, F401 (re-export)
from hyperpod_ha_dev.simulation.lab_takeovers import takeover_scenarios  # noqa: E402

LAB_SCENARIOS.update({s.name: s for s in (rotation_scenario(), *takeover_scenarios())})
