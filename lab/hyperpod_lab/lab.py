"""A real Slurm controller group on one machine: up, down, faults and queries.

Each lab host is a network namespace plus a long-lived "holder" process: PID 1 of the
host's own PID namespace, owner of its UTS namespace (the host name) and mount namespace
(the lab's /etc/hosts, the host's own /etc/slurm and local directory). Daemons and commands
enter the holder's namespaces with ``nsenter``, so a host keeps its name, files and process
list while its daemons come and go, as a real instance does. The holders' PIDs are recorded
in ``<root>/lab.json``; daemons are found by looking in their host's PID namespace. Teardown
works from that file and from what the lab's network namespaces hold, so it also cleans up
after a failed or interrupted set-up.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import shutil
import signal
import struct
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from hyperpod_ha.observability import logger
from hyperpod_lab import accounting_db, config, munge, network
from hyperpod_lab.accounting_db import AdminConnection
from hyperpod_lab.packages import ensure_packages
from hyperpod_lab.processes import (
    CLEAN_ENV,
    LabError,
    alive,
    cmdline,
    command_name,
    first_child,
    kill_all,
    pid_namespace,
    running_pids,
    send,
    spawn,
    stopped,
    terminate,
    thread_count,
    wait_gone,
    wait_until,
)
from hyperpod_lab.releases import SlurmRelease, release
from hyperpod_lab.slurm_source import SlurmSourceError, ensure_built
from hyperpod_lab.topology import (
    CLUSTER_NAME,
    DEFAULT_ROOT,
    Host,
    Topology,
)

# Any of these running means a lab (or a piece of one) is still there.
_SLURM_PROGRAMS = frozenset({"slurmdbd", "slurmctld", "slurmd", "slurmstepd"})
_MUNGED_GRACE_SECONDS = 2.0
_SLURM_ETC = Path("/etc/slurm")
_HOLDER_READY = "hplab-holder.ready"
# The active controller replaces the heartbeat (24.11: write heartbeat.new, unlink, link):
# a reader may find no file for an instant, so a missing file is looked for again.
_HEARTBEAT_READS = 3


@dataclass(frozen=True)
class Heartbeat:
    """``<StateSaveLocation>/heartbeat``: written only by the active controller."""

    beat_time: int  # when the writer last beat (epoch seconds, from the file)
    writer_index: int  # 0 = first SlurmctldHost
    mtime: float

    @classmethod
    def parse(cls, raw: bytes, mtime: float) -> Heartbeat:
        if len(raw) != 16:
            raise LabError(f"heartbeat file has {len(raw)} bytes, expected 16")
        beat_time, writer_index = struct.unpack(">qq", raw)
        return cls(beat_time, writer_index, mtime)


@dataclass(frozen=True)
class UpReport:
    seconds: float
    reused: bool  # the lab was already up and healthy; nothing was rebuilt


@dataclass
class _State:
    """What the lab started and changed; saved after every step so teardown finds it."""

    topology: Topology
    holders: dict[str, int] = field(default_factory=dict)
    munged: int | None = None
    created_run_munge: bool = False
    isolated: list[str] = field(default_factory=list)
    read_only: list[str] = field(default_factory=list)  # hosts whose StateSaveLocation is read-only
    heartbeat_hidden: list[str] = field(default_factory=list)  # hosts that cannot read the heartbeat
    created_etc_slurm: bool = False
    ready: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "topology": self.topology.to_json(),
            "holders": self.holders,
            "munged": self.munged,
            "created_run_munge": self.created_run_munge,
            "isolated": self.isolated,
            "read_only": self.read_only,
            "heartbeat_hidden": self.heartbeat_hidden,
            "created_etc_slurm": self.created_etc_slurm,
            "ready": self.ready,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> _State:
        return cls(
            topology=Topology.from_json(data["topology"]),
            holders={str(host): int(pid) for host, pid in data["holders"].items()},
            munged=None if data["munged"] is None else int(data["munged"]),
            created_run_munge=data["created_run_munge"] is True,
            isolated=[str(host) for host in data["isolated"]],
            read_only=[str(host) for host in data.get("read_only", [])],
            heartbeat_hidden=[str(host) for host in data.get("heartbeat_hidden", [])],
            created_etc_slurm=data.get("created_etc_slurm") is True,
            ready=data["ready"] is True,
        )


def _read_state(root: Path) -> _State | None:
    try:
        return _State.from_json(json.loads((root / "lab.json").read_text()))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        # No lab, or a state file from something else: teardown still finds the lab by name.
        return None


class Lab:
    """The lab under ``topology.root``. Without a topology, the one of the lab running
    under ``root`` (from its state file), else two controllers and two nodes there."""

    def __init__(
        self,
        topology: Topology | None = None,
        *,
        root: Path | None = None,
        admin: AdminConnection | None = None,
    ) -> None:
        if topology is None:
            stored = _read_state(root or DEFAULT_ROOT)
            topology = stored.topology if stored else Topology(root=root or DEFAULT_ROOT)
        self.topology = topology
        self.paths = self.topology.paths
        self.admin = admin or AdminConnection()
        self.release: SlurmRelease = release(topology.slurm)

    # ------------------------------------------------------------------ up and down

    def up(
        self, db_password: str | None = None, *, install_packages: bool = True, timeout: float = 90.0
    ) -> UpReport:
        """Bring the lab up (or confirm it is up); on any failure tear down and re-raise.

        ``db_password`` is the lab database user's password (in the embedded stack, the
        secret's); a random one when None. It is written only to each controller's
        slurmdbd.conf (mode 600) and never logged.
        """
        started = time.monotonic()
        password = db_password if db_password is not None else secrets.token_urlsafe(24)
        config.check_db_password(password)
        if os.geteuid() != 0:
            raise LabError("the lab needs root (network namespaces, mounts, daemons as root)")
        if install_packages:
            ensure_packages(self.release.packages)
        if self.release.built:
            try:
                ensure_built(self.release.series)
            except SlurmSourceError as exc:
                raise LabError(f"Slurm {self.release.series} is not available: {exc.reason}") from None
        if self._healthy(db_password):
            return UpReport(time.monotonic() - started, reused=True)
        self.down()
        try:
            self._build(password, started + timeout)
        except BaseException as exc:
            reason = exc.reason if isinstance(exc, LabError) else type(exc).__name__
            logger.warning("lab up failed; tearing down", extra={"reason": reason})
            try:
                self.down()
            except LabError as cleanup:
                # The set-up failure is the one to report; the teardown's is logged.
                logger.warning("teardown after failed up incomplete", extra={"reason": cleanup.reason})
            raise
        seconds = time.monotonic() - started
        logger.info("lab up", extra={"seconds": round(seconds, 2), "topology": self.topology.to_json()})
        return UpReport(seconds, reused=False)

    def down(self) -> list[str]:
        """Stop everything the lab started and remove everything it created. Idempotent."""
        started = time.monotonic()
        state = _read_state(self.topology.root)
        removed: list[str] = []
        pids: set[int] = set()
        for netns in network.namespaces():
            pids.update(network.namespace_pids(netns))
        if state is not None:
            # Daemons run in the hosts' namespaces; a holder outlives a deleted namespace.
            pids.update(pid for pid in state.holders.values() if self._is_holder(pid))
        # Nothing of the lab survives teardown, so a graceful stop buys nothing; killing a
        # host's holder (PID 1 of its PID namespace) also ends whatever else runs there.
        removed += [f"process {pid}" for pid in kill_all(pids)]
        if state is not None and state.munged is not None and command_name(state.munged) == "munged":
            terminate([state.munged], _MUNGED_GRACE_SECONDS)
            removed.append(f"munged {state.munged}")
            if state.created_run_munge:
                shutil.rmtree(munge.RUN_DIR, ignore_errors=True)
        if state is not None and state.created_etc_slurm:
            with contextlib.suppress(OSError):
                _SLURM_ETC.rmdir()  # only if still empty: the lab's mount point, nothing else
        removed += network.destroy()
        errors = []
        try:
            removed += accounting_db.drop(self.admin)
        except LabError as exc:
            errors.append(exc.reason)
        if self.topology.root.exists():
            shutil.rmtree(self.topology.root)
            removed.append(f"directory {self.topology.root}")
        logger.info(
            "lab down", extra={"seconds": round(time.monotonic() - started, 2), "removed": len(removed)}
        )
        if errors:
            raise LabError("; ".join(errors))
        return removed

    def leftovers(self) -> list[str]:
        """Anything of a lab that exists now (empty after :meth:`down`)."""
        found = [f"netns {name}" for name in network.namespaces()]
        found += [f"link {name}" for name in network.links()]
        found += accounting_db.leftovers(self.admin)
        if self.topology.root.exists():
            found.append(f"directory {self.topology.root}")
        found += [f"process {pid} {name}" for pid, name in _lab_processes(self.topology.root)]
        return found

    def _healthy(self, db_password: str | None) -> bool:
        state = _read_state(self.topology.root)
        if state is None or not state.ready or state.topology != self.topology:
            return False
        if state.isolated or state.read_only or state.heartbeat_hidden:
            return False
        for host in self.topology.hosts:
            if not self._is_holder(state.holders.get(host.name)):
                return False
            if any(self.pid(host.name, daemon) is None for daemon in (*host.daemons, "munged")):
                return False
        if db_password is not None:
            stored = self._stored_password(self.topology.controller_hosts[0])
            if stored is None or not secrets.compare_digest(stored, db_password):
                return False
        return self._controllers_answer()

    def _stored_password(self, host: Host) -> str | None:
        try:
            text = (self.paths.host_etc(host.name) / "slurmdbd.conf").read_text()
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith("StoragePass="):
                return line.split("=", 1)[1]
        return None

    # ------------------------------------------------------------------ building

    def _build(self, password: str, deadline: float) -> None:
        topology = self.topology
        state = _State(topology)
        self._write_files(password)
        # Mount points of every host's own /etc/slurm and /run/munge (Debian's packages make
        # /etc/slurm; a lab of a built Slurm may be the first to need it).
        state.created_etc_slurm = not _SLURM_ETC.exists()
        _SLURM_ETC.mkdir(exist_ok=True)
        self._save(state)
        # The machine's own munged serves the login host (client commands run there).
        if not munge.answers():
            state.munged, state.created_run_munge = munge.start(self.paths.munge_dir)
            self._save(state)
        network.create(topology)
        launchers = {host.name: self._start_holder(host) for host in topology.hosts}
        for host in topology.hosts:
            state.holders[host.name] = self._wait_holder(host, launchers[host.name], deadline)
        self._save(state)
        for host in topology.hosts:
            self._start_daemon(
                state, host, "munged", munge.host_command(self.paths.host_munge_run(host.name))
            )
        for host in topology.hosts:
            self._wait(partial(self._munge_answers, host), deadline, f"munged on {host.name}")
        accounting_db.create(self.admin, password)
        first, *others = topology.controller_hosts
        # One slurmdbd creates the tables before the others share them.
        self._start_daemon(state, first, "slurmdbd")
        self._wait(partial(self._dbd_answers, first), deadline, f"slurmdbd on {first.name}")
        self._exec_checked(first.name, ["sacctmgr", "-i", "add", "cluster", CLUSTER_NAME])
        for host in others:
            self._start_daemon(state, host, "slurmdbd")
        # A starting slurmdbd asks the registered controller (localhost:6817, seen from its
        # own host) to register again, and blanks the registration when nobody answers: so
        # every slurmdbd must be up before the first slurmctld registers.
        for host in others:
            self._wait(partial(self._dbd_answers, host), deadline, f"slurmdbd on {host.name}")
        # The primary first: a backup that starts alone would take over after SlurmctldTimeout.
        self._start_daemon(state, first, "slurmctld")
        self._wait(partial(self._controller_up, first.name, first), deadline, f"slurmctld on {first.name}")
        for host in others:
            self._start_daemon(state, host, "slurmctld")
        for host in topology.compute_hosts:
            self._start_daemon(state, host, "slurmd")
        for host in others:
            self._wait(partial(self._controller_up, first.name, host), deadline, f"slurmctld on {host.name}")
        self._wait(self._registered, deadline, "the primary's registration with slurmdbd")
        self._wait(self._nodes_idle, deadline, "compute nodes to be idle")
        self._wait(self._job_runs, deadline, "a job to run on every compute node", interval=0.5)
        state.ready = True
        self._save(state)

    def _write_files(self, password: str) -> None:
        topology, paths = self.topology, self.paths
        paths.root.mkdir(mode=0o755, parents=True)
        for directory in (paths.shared_etc, paths.state_dir, paths.local):
            directory.mkdir(parents=True, exist_ok=True)
        paths.slurm_conf.write_text(config.slurm_conf(topology))
        paths.cgroup_conf.write_text(config.cgroup_conf())
        paths.hosts_file.write_text(config.hosts_file(topology))
        paths.bin_dir.mkdir()
        shim = paths.bin_dir / "systemctl"
        shim.write_text(config.systemctl_shim(topology))
        shim.chmod(0o755)
        for host in topology.hosts:
            for sub in ("etc", "log", "spool", "run"):
                (paths.host_dir(host.name) / sub).mkdir(parents=True, exist_ok=True)
            munge.prepare_run_dir(paths.host_munge_run(host.name))
            paths.hidden_state_dir(host.name).mkdir(mode=0o700)
            etc = paths.host_etc(host.name)
            (paths.host_dir(host.name) / "units").write_text(config.units(host))
            # As on HyperPod: the shared files are links, slurmdbd.conf is the host's own.
            for shared in (paths.slurm_conf, paths.cgroup_conf):
                (etc / shared.name).symlink_to(shared)
            if host.role == "controller":
                self.write_slurmdbd_conf(host.name, password)

    def write_slurmdbd_conf(self, controller: str, password: str) -> Path:
        """Write a controller's local slurmdbd.conf (mode 600, created that way)."""
        config.check_db_password(password)
        host = self.topology.controller(controller)
        target = self.paths.host_etc(host.name) / "slurmdbd.conf"
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(config.slurmdbd_conf(self.topology, host, password))
        return target

    def _start_holder(self, host: Host) -> int:
        """Start the process that owns the host's namespaces; return the launcher's PID.

        The holder is PID 1 of the host's own PID namespace, so the host's commands see
        only its processes (as ``ps`` on an instance does), orphans there are reaped, and
        its end takes every process of the host with it.
        """
        paths = self.paths
        local = shlex.quote(str(paths.local))
        script = "\n".join(
            [
                "set -e",
                f"hostname {shlex.quote(host.name)}",
                f"mount --bind {shlex.quote(str(paths.hosts_file))} /etc/hosts",
                f"mount --bind {shlex.quote(str(paths.host_dir(host.name)))} {local}",
                f"mount --bind {shlex.quote(str(paths.host_etc(host.name)))} {_SLURM_ETC}",
                f"mount --bind {shlex.quote(str(paths.host_munge_run(host.name)))} {munge.RUN_DIR}",
                f"touch {local}/run/{_HOLDER_READY}",
                "set +e",
                "trap 'exit 0' TERM INT",
                # `wait` reaps any child, orphans of the host's daemons included.
                "while :; do sleep 3600 & wait $!; done",
            ]
        )
        namespaces = ["unshare", "--uts", "--pid", "--fork", "--mount-proc", "--"]
        return spawn(
            ["ip", "netns", "exec", host.netns, *namespaces, "sh", "-c", script],
            paths.launch_log(host.name, "holder"),
        )

    def _wait_holder(self, host: Host, launcher: int, deadline: float) -> int:
        ready = self.paths.host_dir(host.name) / "run" / _HOLDER_READY

        def holder() -> int | None:
            if not alive(launcher):
                raise LabError(f"host {host.name} failed to start: {self._tail(host.name, 'holder')}")
            pid = first_child(launcher)
            return pid if pid is not None and ready.exists() else None

        return wait_until(holder, timeout=max(deadline - time.monotonic(), 0.1), what=f"host {host.name}")

    def _is_holder(self, pid: int | None) -> bool:
        # A recorded PID is only the holder if it still runs the lab's holder script.
        return pid is not None and command_name(pid) == "sh" and _HOLDER_READY in cmdline(pid)

    def _start_daemon(self, state: _State, host: Host, daemon: str, argv: Sequence[str] | None = None) -> int:
        """Start ``daemon`` in the foreground on ``host``; return the daemon's own PID."""
        launcher = spawn(
            [*self._enter(state.holders[host.name]), *(argv or [daemon, "-D"])],
            self.paths.launch_log(host.name, daemon),
            env=self._host_env(),
        )

        def started() -> int | None:
            pid = self.pid(host.name, daemon)
            if pid is None and not alive(launcher):
                raise LabError(f"{daemon} on {host.name} exited at once: {self._tail(host.name, daemon)}")
            return pid

        return wait_until(started, timeout=10, what=f"{daemon} to start on {host.name}", interval=0.01)

    def _host_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """A lab host's command environment: clean, with the systemctl stand-in first, then
        the lab's Slurm (so every daemon and command of the lab is of one release)."""
        return {**CLEAN_ENV, "PATH": f"{self.paths.bin_dir}:{self.release.path()}", **(extra or {})}

    def _save(self, state: _State) -> None:
        tmp = self.paths.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state.to_json(), indent=1))
        tmp.replace(self.paths.state_file)

    def _wait(self, check: Callable[[], object], deadline: float, what: str, interval: float = 0.1) -> None:
        def poll() -> bool | None:
            return True if check() else None

        wait_until(poll, timeout=max(deadline - time.monotonic(), 0.1), what=what, interval=interval)

    # ------------------------------------------------------------------ readiness checks

    def _munge_answers(self, host: Host) -> bool:
        done = self.exec(host.name, ["sh", "-c", "munge -n | unmunge"], timeout=10)
        return done.returncode == 0

    def _dbd_answers(self, host: Host) -> bool:
        done = self.exec(host.name, ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster"], timeout=10)
        return done.returncode == 0

    def _registered(self) -> bool:
        done = self.exec(
            self.topology.controller_hosts[0].name,
            ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster,controlport"],
            timeout=10,
        )
        return done.stdout.strip() == f"{CLUSTER_NAME}|{config.SLURMCTLD_PORT}"

    def _ping(self, from_host: str) -> dict[str, str]:
        """host -> UP/DOWN, as ``scontrol ping`` on ``from_host`` reports it."""
        try:
            done = self.exec(from_host, ["scontrol", "ping"], timeout=10)
        except subprocess.TimeoutExpired:
            # A controller taking control (back) may answer nobody for a while.
            return {}
        states = {}
        for line in done.stdout.splitlines():
            words = line.split()
            if line.startswith("Slurmctld(") and len(words) >= 5:
                states[words[2]] = words[4]
        return states

    def _controller_up(self, from_host: str, host: Host) -> bool:
        return self._ping(from_host).get(host.name) == "UP"

    def _controllers_answer(self) -> bool:
        states = self._ping(self.topology.controller_hosts[0].name)
        return all(states.get(host.name) == "UP" for host in self.topology.controller_hosts)

    def _nodes_idle(self) -> bool:
        done = self.exec(
            self.topology.controller_hosts[0].name, ["sinfo", "-h", "-N", "-o", "%N %T"], timeout=10
        )
        states = dict(line.split() for line in done.stdout.splitlines() if len(line.split()) == 2)
        return done.returncode == 0 and all(states.get(h.name) == "idle" for h in self.topology.compute_hosts)

    def _job_runs(self) -> bool:
        # Nodes that just turned idle may still lose a job's I/O: a real job is the proof.
        nodes = self.topology.compute_hosts
        try:
            done = self.exec(
                self.topology.controller_hosts[0].name,
                ["srun", f"--nodes={len(nodes)}", "--ntasks-per-node=1", "hostname"],
                timeout=10,
            )
        except subprocess.TimeoutExpired:
            return False
        return done.returncode == 0 and sorted(done.stdout.split()) == sorted(h.name for h in nodes)

    # ------------------------------------------------------------------ running commands

    def _enter(self, holder: int) -> list[str]:
        return ["nsenter", f"--target={holder}", "--net", "--mount", "--uts", "--pid", "--"]

    def holder(self, host: str) -> int:
        """The PID owning ``host``'s namespaces; :class:`LabError` when the host is not running."""
        self.topology.host(host)
        state = _read_state(self.topology.root)
        pid = state.holders.get(host) if state else None
        if pid is None or not self._is_holder(pid):
            raise LabError(f"lab host {host} is not running")
        return pid

    def exec(
        self,
        host: str,
        argv: Sequence[str],
        *,
        timeout: float = 30.0,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` (no shell) on a lab host, as root with a clean environment plus
        ``env``. On timeout the whole process group is killed and
        ``subprocess.TimeoutExpired`` raised.
        """
        return _run_group([*self._enter(self.holder(host)), *argv], timeout, self._host_env(env))

    def client(self, argv: Sequence[str], *, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        """Run a Slurm client command on the login host (the machine's own namespace)."""
        env = {**CLEAN_ENV, "PATH": self.release.path(), "SLURM_CONF": str(self.paths.slurm_conf)}
        return _run_group(list(argv), timeout, env)

    def _exec_checked(self, host: str, argv: Sequence[str]) -> str:
        done = self.exec(host, argv)
        if done.returncode != 0:
            tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-2:])
            raise LabError(f"{' '.join(argv[:3])} on {host} failed (rc={done.returncode}): {tail}")
        return done.stdout

    def reachable(self, host: str) -> bool:
        """Whether an agent on ``host`` could be reached: it runs and is not isolated."""
        state = _read_state(self.topology.root)
        if state is None or host in state.isolated:
            return False
        return self._is_holder(state.holders.get(host))

    # ------------------------------------------------------------------ queries

    def is_up(self) -> bool:
        state = _read_state(self.topology.root)
        return state is not None and state.ready

    def controllers(self) -> list[dict[str, str]]:
        """The controller group as the workflow's discovery reports it (empty when down)."""
        if not self.is_up():
            return []
        return [
            {
                "instance_id": host.instance_id,
                "group": host.group,
                "status": "Running",
                "private_ip": host.address,
                "hostname": host.name,
                "target": host.target,
            }
            for host in self.topology.controller_hosts
        ]

    def pid(self, host: str, daemon: str) -> int | None:
        """The PID of ``daemon`` running on ``host`` (None when it does not run there).

        Found by looking, not from a record: whoever started it (the lab, or the host's
        systemctl as the rotation does), it is the process of that name in the host's PID
        namespace.
        """
        self.topology.host(host)
        state = _read_state(self.topology.root)
        holder = state.holders.get(host) if state else None
        if holder is None or not self._is_holder(holder):
            return None
        namespace = pid_namespace(holder)
        found = [
            pid
            for pid in running_pids()
            if command_name(pid) == daemon and pid_namespace(pid) == namespace and pid != holder
        ]
        return min(found, default=None)

    def log(self, host: str, daemon: str = "slurmctld") -> str:
        self.topology.host(host)
        try:
            return self.paths.log(host, daemon).read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def heartbeat(self) -> Heartbeat | None:
        for attempt in range(_HEARTBEAT_READS):
            if attempt:
                time.sleep(0.05)
            try:
                with self.paths.heartbeat.open("rb") as handle:
                    raw = handle.read()
                    mtime = os.fstat(handle.fileno()).st_mtime
            except FileNotFoundError:
                continue
            return Heartbeat.parse(raw, mtime)
        return None

    def status(self) -> dict[str, object]:
        state = _read_state(self.topology.root)
        hosts: dict[str, object] = {}
        for host in self.topology.hosts:
            daemons = {}
            for daemon in host.daemons:
                pid = self.pid(host.name, daemon)
                daemons[daemon] = {
                    "pid": pid,
                    "stopped": pid is not None and stopped(pid),
                    "threads": thread_count(pid) if pid else None,
                }
            holder = state.holders.get(host.name) if state else None
            hosts[host.name] = {
                "address": host.address,
                "instance_id": host.instance_id,
                "running": self._is_holder(holder),
                "isolated": bool(state and host.name in state.isolated),
                "daemons": daemons,
            }
        beat = self.heartbeat()
        return {
            "up": bool(state and state.ready),
            "root": str(self.topology.root),
            "topology": self.topology.to_json(),
            "hosts": hosts,
            "state_read_only": bool(state and state.read_only),
            "state_read_only_hosts": list(state.read_only) if state else [],
            "heartbeat_hidden_hosts": list(state.heartbeat_hidden) if state else [],
            "heartbeat": None
            if beat is None
            else {"beat_time": beat.beat_time, "writer_index": beat.writer_index, "mtime": beat.mtime},
            "controllers": self.controllers(),
        }

    # ------------------------------------------------------------------ faults

    def _running_state(self) -> _State:
        state = _read_state(self.topology.root)
        if state is None or not state.holders:
            raise LabError("the lab is not up")
        return state

    def kill_slurmctld(self, controller: str, sig: signal.Signals = signal.SIGKILL) -> int:
        """Send ``sig`` to the controller's slurmctld; for KILL/TERM wait until it is gone."""
        self.topology.controller(controller)
        pid = self.pid(controller, "slurmctld")
        if pid is None or not send(pid, sig, expect="slurmctld"):
            raise LabError(f"slurmctld does not run on {controller}")
        if sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT) and wait_gone([pid], 15.0):
            raise LabError(f"slurmctld on {controller} did not exit after {sig.name}")
        logger.info("signalled slurmctld", extra={"controller": controller, "signal": sig.name, "pid": pid})
        return pid

    def stop_slurmctld(self, controller: str) -> int:
        """SIGSTOP: a hung controller (the process stays, answers nothing)."""
        return self.kill_slurmctld(controller, signal.SIGSTOP)

    def cont_slurmctld(self, controller: str) -> int:
        """SIGCONT: the hung controller resumes."""
        return self.kill_slurmctld(controller, signal.SIGCONT)

    def start_slurmctld(self, controller: str, *, wait: bool = True, timeout: float = 30.0) -> int:
        """Start the controller's slurmctld (again); with ``wait``, until it answers pings."""
        host = self.topology.controller(controller)
        return self._restart(host, "slurmctld", wait, timeout, lambda: self._controller_up(host.name, host))

    def stop_slurmdbd(self, controller: str | None = None) -> list[int]:
        """Stop slurmdbd (SIGTERM) on one controller, or on all of them."""
        stopped = []
        for host in self._controllers(controller):
            pid = self.pid(host.name, "slurmdbd")
            if pid is not None and send(pid, signal.SIGTERM, expect="slurmdbd"):
                stopped.append(pid)
        if wait_gone(stopped, 15.0):
            raise LabError("slurmdbd did not exit after SIGTERM")
        return stopped

    def start_slurmdbd(
        self, controller: str | None = None, *, wait: bool = True, timeout: float = 30.0
    ) -> list[int]:
        """Start slurmdbd on one controller or all; with ``wait``, until ``sacctmgr`` answers there.

        A slurmdbd reads its slurmdbd.conf when it starts: this is how a changed
        ``StoragePass`` takes effect.
        """
        return [
            self._restart(host, "slurmdbd", wait, timeout, partial(self._dbd_answers, host))
            for host in self._controllers(controller)
        ]

    def _controllers(self, controller: str | None) -> tuple[Host, ...]:
        if controller is None:
            return self.topology.controller_hosts
        return (self.topology.controller(controller),)

    def _restart(
        self, host: Host, daemon: str, wait: bool, timeout: float, ready: Callable[[], object]
    ) -> int:
        state = self._running_state()
        pid = self.pid(host.name, daemon)
        if pid is None:
            pid = self._start_daemon(state, host, daemon)
            logger.info("started daemon", extra={"host": host.name, "daemon": daemon, "pid": pid})
        if wait:
            self._wait(ready, time.monotonic() + timeout, f"{daemon} on {host.name}")
        return pid

    def isolate(self, host: str) -> None:
        """Cut the host off the network; it keeps running and keeps the shared state."""
        self._set_isolated(host, True)

    def reconnect(self, host: str) -> None:
        self._set_isolated(host, False)

    def _set_isolated(self, name: str, isolated: bool) -> None:
        host = self.topology.host(name)
        state = self._running_state()
        network.set_connected(host, not isolated)
        state.isolated = _with(state.isolated, host.name, isolated)
        self._save(state)

    def make_state_unwritable(self, controller: str | None = None) -> None:
        """Make StateSaveLocation read-only for one controller or all, as a failing FSx would be.

        Root ignores file modes, so each controller gets a read-only bind mount in its own
        mount namespace; the machine's view is untouched.
        """
        self._set_state_view(self._controllers(controller), read_only=True)

    def restore_state_writable(self, controller: str | None = None) -> None:
        self._set_state_view(self._controllers(controller), read_only=False)

    def hide_heartbeat(self, controller: str | None = None) -> None:
        """The controller(s) can no longer read the heartbeat: an empty directory of their own is
        bound over StateSaveLocation in their mount namespace (as when FSx is not mounted there)."""
        self._set_state_view(self._controllers(controller), hidden=True)

    def show_heartbeat(self, controller: str | None = None) -> None:
        self._set_state_view(self._controllers(controller), hidden=False)

    def _set_state_view(
        self, hosts: Sequence[Host], *, read_only: bool | None = None, hidden: bool | None = None
    ) -> None:
        state = self._running_state()
        for host in hosts:
            if read_only is not None:
                state.read_only = _with(state.read_only, host.name, read_only)
            if hidden is not None:
                state.heartbeat_hidden = _with(state.heartbeat_hidden, host.name, hidden)
            self._mount_state(state, host)
        self._save(state)

    def _mount_state(self, state: _State, host: Host) -> None:
        """Put the host's view of StateSaveLocation in the state's shape: unmount whatever the
        lab bound there, then bind again what the state asks for."""
        target = str(self.paths.state_dir)
        for _ in range(4):
            if not self._mount(state, host, ["umount", target], check=False):
                break
        if host.name in state.heartbeat_hidden:
            hidden = str(self.paths.hidden_state_dir(host.name))
            self._mount(state, host, ["mount", "--bind", hidden, target])
        if host.name in state.read_only:
            self._mount(state, host, ["mount", "--bind", target, target])
            self._mount(state, host, ["mount", "-o", "remount,bind,ro", target])

    def _mount(self, state: _State, host: Host, argv: list[str], *, check: bool = True) -> bool:
        enter = ["nsenter", f"--target={state.holders[host.name]}", "--mount", "--"]
        done = subprocess.run(
            [*enter, *argv], capture_output=True, text=True, check=False, env=dict(CLEAN_ENV)
        )
        if check and done.returncode != 0:
            raise LabError(f"{argv[0]} on {host.name} failed: {done.stderr.strip()[:200]}")
        return done.returncode == 0

    def _tail(self, host: str, what: str) -> str:
        try:
            lines = self.paths.launch_log(host, what).read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no output)"
        return " | ".join(lines[-3:]) or "(no output)"


def _with(names: list[str], name: str, present: bool) -> list[str]:
    others = [other for other in names if other != name]
    return [*others, name] if present else others


def _run_group(argv: list[str], timeout: float, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    child = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # The command may have children of its own: end its whole group.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        raise
    return subprocess.CompletedProcess(
        argv, child.returncode, stdout.decode(errors="replace"), stderr.decode(errors="replace")
    )


def _lab_processes(root: Path) -> list[tuple[int, str]]:
    """Processes (not zombies) that belong to a lab: in a lab namespace, naming its root, or Slurm's."""
    in_lab_netns = set()
    for netns in network.namespaces():
        in_lab_netns.update(network.namespace_pids(netns))
    found = []
    for pid in running_pids():
        name = command_name(pid) or "?"
        if pid != os.getpid() and (
            pid in in_lab_netns or str(root) in cmdline(pid) or name in _SLURM_PROGRAMS
        ):
            found.append((pid, name))
    return found
