"""The lab's hosts: running commands in their namespaces, finding their daemons, starting one.

Each lab host is a network namespace plus a long-lived "holder" process: PID 1 of the
host's own PID namespace, owner of its UTS namespace (the host name) and mount namespace
(the lab's /etc/hosts, the host's own /etc/slurm and local directory). Daemons and commands
enter the holder's namespaces with ``nsenter``, so a host keeps its name, files and process
list while its daemons come and go, as a real instance does."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from hyperpod_lab.accounting_db import AdminConnection
from hyperpod_lab.lab_state import LabState, read_state
from hyperpod_lab.processes import (
    CLEAN_ENV,
    LabError,
    alive,
    cmdline,
    command_name,
    pid_namespace,
    running_pids,
    spawn,
    wait_until,
)
from hyperpod_lab.releases import SlurmRelease, release
from hyperpod_lab.topology import (
    Host,
    Topology,
    current_slot,
    slot_root,
)

HOLDER_READY = "hplab-holder.ready"


class LabHosts:
    """The lab under ``topology.root``: its hosts and their commands (the base of
    :class:`~hyperpod_lab.Lab`)."""

    def __init__(
        self,
        topology: Topology | None = None,
        *,
        root: Path | None = None,
        admin: AdminConnection | None = None,
    ) -> None:
        if topology is None:
            # This process's slot's lab, unless told where.
            root = root or slot_root(current_slot())
            stored = read_state(root)
            topology = stored.topology if stored else Topology(root=root)
        self.topology = topology
        self.paths = self.topology.paths
        self.admin = admin or AdminConnection()
        self.release: SlurmRelease = release(topology.slurm)

    def _is_holder(self, pid: int | None) -> bool:
        # A recorded PID is only the holder if it still runs the lab's holder script.
        return pid is not None and command_name(pid) == "sh" and HOLDER_READY in cmdline(pid)

    def _start_daemon(
        self, state: LabState, host: Host, daemon: str, argv: Sequence[str] | None = None
    ) -> int:
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

    def _host_env(
        self, extra: Mapping[str, str] | None = None, path_first: Sequence[str] = ()
    ) -> dict[str, str]:
        """A lab host's command environment: clean, with ``path_first`` (an agent's tools) and
        the systemctl stand-in first, then where an instance has its AWS CLI, then the lab's
        Slurm (so every daemon and command of the lab is of one release)."""
        path = ":".join(
            [*path_first, str(self.paths.bin_dir), str(self.paths.aws_cli_dir), self.release.path()]
        )
        return {**CLEAN_ENV, "PATH": path, **(extra or {})}

    def _save(self, state: LabState) -> None:
        tmp = self.paths.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state.to_json(), indent=1))
        tmp.replace(self.paths.state_file)

    def _wait(self, check: Callable[[], object], deadline: float, what: str, interval: float = 0.1) -> None:
        def poll() -> bool | None:
            return True if check() else None

        wait_until(poll, timeout=max(deadline - time.monotonic(), 0.1), what=what, interval=interval)

    def _enter(self, holder: int) -> list[str]:
        return ["nsenter", f"--target={holder}", "--net", "--mount", "--uts", "--pid", "--"]

    def holder(self, host: str) -> int:
        """The PID owning ``host``'s namespaces; :class:`LabError` when the host is not running."""
        self.topology.host(host)
        state = read_state(self.topology.root)
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
        path_first: Sequence[str] = (),
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` (no shell) on a lab host, as root with a clean environment plus
        ``env``, ``path_first`` first on its PATH. On timeout the whole process group is killed
        and ``subprocess.TimeoutExpired`` raised.
        """
        environment = self._host_env(env, path_first)
        return run_group([*self._enter(self.holder(host)), *argv], timeout, environment)

    def client(self, argv: Sequence[str], *, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        """Run a Slurm client command on the login host (the machine's own namespace)."""
        env = {**CLEAN_ENV, "PATH": self.release.path(), "SLURM_CONF": str(self.paths.slurm_conf)}
        return run_group(list(argv), timeout, env)

    def _exec_checked(self, host: str, argv: Sequence[str]) -> str:
        done = self.exec(host, argv)
        if done.returncode != 0:
            tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-2:])
            raise LabError(f"{' '.join(argv[:3])} on {host} failed (rc={done.returncode}): {tail}")
        return done.stdout

    def reachable(self, host: str) -> bool:
        """Whether an agent on ``host`` could be reached: it runs and is not isolated."""
        state = read_state(self.topology.root)
        if state is None or host in state.isolated:
            return False
        return self._is_holder(state.holders.get(host))

    def pid(self, host: str, daemon: str) -> int | None:
        """The PID of ``daemon`` running on ``host`` (None when it does not run there).

        Found by looking, not from a record: whoever started it (the lab, or the host's
        systemctl as the rotation does), it is the process of that name in the host's PID
        namespace.
        """
        self.topology.host(host)
        state = read_state(self.topology.root)
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

    def _running_state(self) -> LabState:
        state = read_state(self.topology.root)
        if state is None or not state.holders:
            raise LabError("the lab is not up")
        return state

    def _controllers(self, controller: str | None) -> tuple[Host, ...]:
        if controller is None:
            return self.topology.controller_hosts
        return (self.topology.controller(controller),)

    def _tail(self, host: str, what: str) -> str:
        try:
            lines = self.paths.launch_log(host, what).read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no output)"
        return " | ".join(lines[-3:]) or "(no output)"


def run_group(argv: list[str], timeout: float, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
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
