"""Bringing the lab up: its files, its hosts' holders, then munge, slurmdbd, slurmctld, slurmd."""

from __future__ import annotations

import os
import secrets
import shlex
import time
from functools import partial
from pathlib import Path

from hyperpod_ha.observability import logger
from hyperpod_lab import accounting_db, config, machine, munge, network
from hyperpod_lab.hosts import HOLDER_READY
from hyperpod_lab.lab_state import LabState, UpReport, read_state
from hyperpod_lab.packages import ensure_packages
from hyperpod_lab.processes import (
    LabError,
    alive,
    first_child,
    spawn,
    wait_until,
)
from hyperpod_lab.readiness import LabReadiness
from hyperpod_lab.releases import SlurmSourceError
from hyperpod_lab.slurm_source import ensure_built
from hyperpod_lab.teardown import LabTeardown
from hyperpod_lab.topology import (
    CLUSTER_NAME,
    Host,
)

# What a controller taking over reads first and must find (Slurm 25.11 exits without them).
STATE_FILES = ("assoc_usage", "qos_usage", "node_state", "job_state", "part_state")


class LabBuild(LabTeardown, LabReadiness):
    def up(
        self,
        db_password: str | None = None,
        *,
        install_packages: bool = True,
        timeout: float = 90.0,
        slurm_source: Path | None = None,
        sha256: str | None = None,
    ) -> UpReport:
        """Bring the lab up (or confirm it is up); on any failure tear down and re-raise.

        ``db_password`` is the lab database user's password (in the embedded stack, the
        secret's); a random one when None. It is written only to each controller's
        slurmdbd.conf (mode 600) and never logged. ``slurm_source`` and ``sha256``: the source
        tarball of a release built from one (25.11), when not its default.
        """
        started = time.monotonic()
        password = db_password if db_password is not None else secrets.token_urlsafe(24)
        config.check_db_password(password)
        if os.geteuid() != 0:
            raise LabError("the lab needs root (network namespaces, mounts, daemons as root)")
        if install_packages:
            ensure_packages(self.release.packages)
        built_slurm = False
        if self.release.built:
            try:
                built_slurm = ensure_built(self.release.series, source=slurm_source, sha256=sha256).built_now
            except SlurmSourceError as exc:
                raise LabError(f"Slurm {self.release.series} is not available: {exc.reason}") from None
        if self._healthy(db_password):
            return UpReport(time.monotonic() - started, reused=True, built_slurm=built_slurm)
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
        return UpReport(seconds, reused=False, built_slurm=built_slurm)

    def _healthy(self, db_password: str | None) -> bool:
        state = read_state(self.topology.root)
        if state is None or not state.ready or state.topology != self.topology:
            return False
        if state.isolated or state.read_only or state.heartbeat_hidden or not self._files_current():
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

    def _files_current(self) -> bool:
        """The shared slurm.conf and ON/OFF programs are this version's (a lab brought up by an
        older one is rebuilt); a controller's local copy is the baseline's to repair."""
        paths = self.paths
        try:
            if paths.slurm_conf.read_text() != config.slurm_conf(self.topology):
                return False
            return all(
                paths.primary_program(status).read_text() == config.primary_program(self.topology, status)
                for status in config.PRIMARY_PROGRAM_MESSAGES
            )
        except OSError:
            return False

    def _stored_password(self, host: Host) -> str | None:
        try:
            text = (self.paths.host_etc(host.name) / "slurmdbd.conf").read_text()
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith("StoragePass="):
                return line.split("=", 1)[1]
        return None

    def _build(self, password: str, deadline: float) -> None:
        topology = self.topology
        state = LabState(topology)
        with machine.machine_lock():
            # The state file first: from then on, no other lab removes what this one uses.
            self._write_files(password)
            self._save(state)
            # The mount points of every host's own /etc/slurm and /run/munge, and the machine's
            # own munged for the login host (client commands run there).
            machine.acquire()
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
        accounting_db.create(self.admin, self.topology, password)
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
        if self.release.needs_state_files:
            self._save_state_now(first, deadline)
        state.ready = True
        self._save(state)

    def _save_state_now(self, primary: Host, deadline: float) -> None:
        """Make the primary write every state file now, so a failover right after ``up`` works.

        A fresh StateSaveLocation gets its state files at the first periodic save, 300 s after
        the start; before it, Slurm 25.11's backup exits when taking over (``needs_state_files``).
        ``scontrol reconfigure`` saves all state before the primary restarts itself in place.
        """
        state_dir = self.paths.state_dir
        self._exec_checked(primary.name, ["scontrol", "reconfigure"])
        self._wait(
            lambda: all((state_dir / name).is_file() for name in STATE_FILES),
            deadline,
            f"the state files in {state_dir}",
        )
        self._wait(
            partial(self._controller_up, primary.name, primary), deadline, f"slurmctld on {primary.name}"
        )

    def _write_files(self, password: str) -> None:
        topology, paths = self.topology, self.paths
        paths.root.mkdir(mode=0o755, parents=True)
        for directory in (paths.shared_etc, paths.state_dir, paths.local):
            directory.mkdir(parents=True, exist_ok=True)
        paths.slurm_conf.write_text(config.slurm_conf(topology))
        paths.cgroup_conf.write_text(config.cgroup_conf())
        paths.controller_status_log.parent.mkdir()
        for status in config.PRIMARY_PROGRAM_MESSAGES:
            program = paths.primary_program(status)
            program.parent.mkdir(exist_ok=True)
            program.write_text(config.primary_program(topology, status))
            program.chmod(0o755)
        paths.hosts_file.write_text(config.hosts_file(topology))
        paths.bin_dir.mkdir()
        paths.aws_cli_dir.mkdir()
        shim = paths.bin_dir / "systemctl"
        shim.write_text(config.systemctl_shim(topology, self._host_env()))
        shim.chmod(0o755)
        for host in topology.hosts:
            for sub in ("etc", "log", "spool", "run"):
                (paths.host_dir(host.name) / sub).mkdir(parents=True, exist_ok=True)
            programs = paths.trigger_program_dir(host.name)
            programs.mkdir()
            programs.chmod(0o755)  # the triggers' install refuses a directory others may write
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
                f"mount --bind {shlex.quote(str(paths.host_etc(host.name)))} {machine.SLURM_ETC}",
                f"mount --bind {shlex.quote(str(paths.host_munge_run(host.name)))} {munge.RUN_DIR}",
                f"mount --bind {shlex.quote(str(paths.trigger_program_dir(host.name)))} "
                f"{machine.TRIGGER_PROGRAM_DIR}",
                f"touch {local}/run/{HOLDER_READY}",
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
        ready = self.paths.host_dir(host.name) / "run" / HOLDER_READY

        def holder() -> int | None:
            if not alive(launcher):
                raise LabError(f"host {host.name} failed to start: {self._tail(host.name, 'holder')}")
            pid = first_child(launcher)
            return pid if pid is not None and ready.exists() else None

        return wait_until(holder, timeout=max(deadline - time.monotonic(), 0.1), what=f"host {host.name}")
