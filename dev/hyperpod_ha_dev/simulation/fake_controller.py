"""A controller on disk for the real probe to look at, built from real captured Slurm output.

The probe script runs unchanged under bash; only the Slurm commands (and ``systemctl``,
``pgrep``, ``uname``, ``ip``) are small scripts that print files captured from a real Slurm
22.05 controller pair (``hyperpod_ha_dev/captures``), the log's timestamps moved to the
scenario's time (``clock``). StateSaveLocation is a real directory with a heartbeat written
now; a ``sleep`` process stands in for a running slurmctld (systemd's main PID of its unit, as on
HyperPod: the probe counts only the node's own slurmctld). As on HyperPod, every controller's
slurm.conf is a link to one shared copy beside StateSaveLocation (the ``fsx`` directory), which
names the ON/OFF programs there; a state may turn it into a local copy with values changed.
The slurmctld log is at one node-local path every simulated node uses in turn (the cluster
probes one node at a time), as the shared slurm.conf names one path for every node.
"""

from __future__ import annotations

import getpass
import os
import shlex
import signal
import stat
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from hyperpod_ha_dev.simulation.capture_clock import CaptureClock
from hyperpod_ha_dev.simulation.node_paths import moved

SlurmctldState = Literal["running", "stopped", "hung"]


@dataclass(frozen=True)
class ControllerState:
    """What one controller shows at one moment; every text is a capture file's name."""

    slurmctld: SlurmctldState = "running"
    log: str = "slurmctld_log_ctl1_primary.txt"
    ping: str = "ping_all_up.txt"
    ping_rc: int = 0
    show_config_answers: bool = True
    heartbeat_writer: int | None = 0  # who writes the shared heartbeat (only the active one does)
    heartbeat_age_seconds: int = 1
    state_writable: bool = True
    sacctmgr: str = "sacctmgr_cluster_ctl1.txt"
    sacctmgr_rc: int = 0
    sinfo: str = "sinfo_idle.txt"
    sinfo_rc: int = 0
    dbd_queue: int = 0
    reachable: bool = True  # False: SSM cannot reach the node at all
    # Drift: this node's slurm.conf a local copy, with (key, lines) replaced ((): key removed).
    slurm_conf: Literal["shared", "local"] = "shared"
    conf_changes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    running_programs: bool = True  # `scontrol show config` names SlurmctldPrimaryOnProg/OffProg
    programs: Literal["executable", "not_executable", "missing"] = "executable"  # as this node sees them
    slurm_version: str = "22.05.8"  # what `slurmctld -V` says
    # The node has strigger: the cluster's triggers kept in the shared directory (as slurmctld
    # keeps them in StateSaveLocation), listed and set as Slurm prints and checks them, and
    # SlurmUser (this process's user) in `scontrol show config`. Off: no strigger on the node.
    strigger: bool = False


@dataclass(frozen=True)
class ControllerIdentity:
    name: str  # the SlurmctldHost name, e.g. ctl1
    address: str


@dataclass
class FakeController:
    root: Path
    identity: ControllerIdentity
    controllers: tuple[ControllerIdentity, ...]
    captures: Path
    shared_state: Path  # StateSaveLocation, shared by every controller as FSx for Lustre is
    cluster: str = "lab"
    clock: CaptureClock = field(default_factory=CaptureClock)  # the scenario's time for the captures
    _daemon: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def state_dir(self) -> Path:
        return self.shared_state

    @property
    def requests_file(self) -> Path:
        """Takeovers and starts asked of the controllers, one line each (the cluster acts on them)."""
        return self.shared_state.parent / "control-requests"

    @property
    def jobs_file(self) -> Path:
        return self.shared_state.parent / "jobs"

    @property
    def shared_dir(self) -> Path:
        """Stands in for FSx for Lustre: StateSaveLocation, slurm.conf and the ON/OFF programs."""
        return self.shared_state.parent

    @property
    def shared_conf(self) -> Path:
        return self.shared_dir / "etc" / "slurm.conf"

    @property
    def triggers_file(self) -> Path:
        """The cluster's Slurm triggers, one row each as ``strigger --get`` prints it."""
        return self.shared_dir / "triggers"

    @property
    def program_dir(self) -> Path:
        """Where the Slurm triggers' install writes its program: one path on every node (the
        node-local directory every simulated node uses in turn), as on HyperPod."""
        return self.local_dir / "libexec" / "hyperpod-ha"

    @property
    def local_dir(self) -> Path:
        """The node-local directory (the log), one path for every node, used in turn."""
        return self.shared_dir.parent / "node-local"

    def apply(self, state: ControllerState) -> None:
        """Make the node look like ``state``."""
        for directory in (self.root / "bin", self.root / "tmp", self.shared_state, self.local_dir):
            directory.mkdir(parents=True, exist_ok=True)
        self.jobs_file.touch(exist_ok=True)
        self._daemon_as(state.slurmctld)
        log = self.local_dir / "slurmctld.log"
        log.write_text(self.clock.apply(self._capture(state.log)))
        state_dir = self.state_dir if state.state_writable else Path("/proc/1")
        heartbeat = self.state_dir / "heartbeat"
        if state.heartbeat_writer is None:
            heartbeat.unlink(missing_ok=True)
        else:
            beat = int(time.time()) - state.heartbeat_age_seconds
            heartbeat.write_bytes(beat.to_bytes(8, "big") + state.heartbeat_writer.to_bytes(8, "big"))
            os.utime(heartbeat, (beat, beat))
        self._write_slurm_conf(state, log)
        programs = self._write_programs(state.programs)
        show_config = (
            "".join(
                f"SlurmctldHost[{i}]        = {c.name}({c.address})\n" for i, c in enumerate(self.controllers)
            )
            + "SlurmctldTimeout        = 10 sec\n"
            + f"StateSaveLocation       = {state_dir}\n"
            + self._capture("show_config_accounting_lab.txt")
            + f"SlurmctldLogFile        = {log}\n"
            + "MaxDBDMsgs              = 20008\n"
            + (f"SlurmUser               = {getpass.getuser()}({os.getuid()})\n" if state.strigger else "")
            + "".join(
                f"SlurmctldPrimary{slot}Prog = {path if state.running_programs else '(null)'}\n"
                for slot, path in programs.items()
            )
        )
        (self.root / "show_config.txt").write_text(show_config)
        # What `sacctmgr show cluster NAME format=ControlHost` answers; a reconfigure registers
        # this controller (the drill's registration step).
        control_host = self.root / "control_host.txt"
        fields = self._capture(state.sacctmgr).split("|")
        control_host.write_text(f"{fields[1]}\n" if len(fields) > 1 and fields[1] else "")
        unreachable = "slurm_load_ctl_conf error: Unable to contact slurm controller (connect failure)"
        show = (
            f"cat '{self.root / 'show_config.txt'}'; exit 0"
            if state.show_config_answers
            else f"echo '{unreachable}'; exit 1"
        )
        pid = self._daemon.pid if self._daemon else ""
        ping = self._prints(state.ping, state.ping_rc)
        running = "active" if pid else "inactive"
        (self.root / "bin" / "strigger").unlink(missing_ok=True)  # only a state with strigger has one
        # A drill's takeover, reconfigure and start are recorded for the simulated cluster to act on.
        takeover = f"echo \"takeover ${{2:-1}} {self.identity.name}\" >> '{self.requests_file}'; exit 0"
        reconfigure = (
            f"echo '{self.identity.address}' > '{control_host}'; "
            f"echo \"reconfigure {self.identity.name}\" >> '{self.requests_file}'; exit 0"
        )
        self._commands(
            {
                "scontrol": (
                    f'case "$1" in\n  ping) {ping};;\n  show) {show};;\n'
                    f"  takeover) {takeover};;\n  reconfigure) {reconfigure};;\n"
                    "esac\nexit 2\n"
                ),
                **self._job_commands(reachable=state.show_config_answers),
                "sinfo": self._prints(state.sinfo, state.sinfo_rc),
                # sdiag's header as Slurm prints it (src/sdiag/sdiag.c), the figures the probe reads.
                "sdiag": (
                    'echo "sdiag output at $(date) ($(date +%s))"\n'
                    "echo 'Data since      Thu Jan  1 00:00:01 1970 (1)'\n"
                    "echo 'Server thread count:  3'\necho 'Agent queue size:     0'\n"
                    f"echo 'DBD Agent queue size: {state.dbd_queue}'\n"
                ),
                "sacctmgr": (
                    f'case "$*" in\n  *ping*) {self._prints("sacctmgr_ping_invalid_keyword.txt", 1)};;\n'
                    # The drill's registration check asks for ControlHost alone.
                    f"  *ControlHost*) cat '{control_host}'; exit {state.sacctmgr_rc};;\n"
                    f"  *) {self._prints(state.sacctmgr, state.sacctmgr_rc)};;\nesac\n"
                ),
                "systemctl": (
                    # systemd's main PID of slurmctld.service: the node's own slurmctld (a `sleep`
                    # stands in for it, so its executable is not the node's Slurm binary).
                    f'[ "$1" = show ] && {{ echo MainPID={pid or 0}; exit 0; }}\n'
                    f'[ "$1" = start ] && [ "$2" = slurmctld ] && '
                    f"{{ echo \"start {self.identity.name}\" >> '{self.requests_file}'; exit 0; }}\n"
                    f'[ "$2" = slurmctld ] && {{ echo {running}; exit {0 if pid else 3}; }}\n'
                    "echo inactive\nexit 3\n"
                ),
                # pgrep exits 1 when nothing matches, as the real one does.
                "pgrep": f'[ "$2" = slurmctld ] && [ -n "{pid}" ] && {{ echo {pid}; exit 0; }}\nexit 1\n',
                "slurmctld": f"echo 'slurm {state.slurm_version}'\n",
                **(
                    {"strigger": _STRIGGER.replace("@TABLE@", str(self.triggers_file))}
                    if state.strigger
                    else {}
                ),
                "uname": f"echo {self.identity.name}\n",
                "hostname": f"echo {self.identity.name}\n",
                # `ip -o addr` lines, as the probe reads them
                "ip": (
                    "echo '1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever'\n"
                    f"echo '2: eth0    inet {self.identity.address}/24 scope global eth0\\       "
                    "valid_lft forever'\n"
                ),
            }
        )

    def _job_commands(self, reachable: bool) -> dict[str, str]:
        """squeue, sbatch and sacct over the shared jobs file ("<id> <state> <exit>" lines)."""
        jobs = self.jobs_file
        if not reachable:
            down = "echo '{}: error: Unable to contact slurm controller (connect failure)'; exit 1\n"
            return {"squeue": down.format("squeue"), "sbatch": down.format("sbatch"), "sacct": "exit 0\n"}
        return {
            "squeue": f"awk '$2 ~ /^(PENDING|RUNNING|COMPLETING)$/ {{print $1, $2}}' '{jobs}'\n",
            "sbatch": (
                f"next=$(awk 'BEGIN {{n = 100}} $1 >= n {{n = $1 + 1}} END {{print n}}' '{jobs}')\n"
                f'echo "$next PENDING 0:0" >> \'{jobs}\'\necho "$next"\n'
            ),
            "sacct": (
                'while [ $# -gt 0 ]; do [ "$1" = -j ] && ids=$2; shift; done\n'
                "for id in ${ids//,/ }; do\n"
                f'  awk -v id="$id" \'$1 == id {{print $1 "|" $2 "|" $3}}\' \'{jobs}\'\ndone\n'
            ),
        }

    def run(self, command: str, deadline_seconds: float) -> subprocess.CompletedProcess[str]:
        """Run the command line as the SSM agent would: split, no shell, on this node's PATH."""
        env = {
            "PATH": f"{self.root / 'bin'}:/usr/bin:/bin:/usr/sbin:/sbin",
            "TMPDIR": str(self.root / "tmp"),
            "LC_ALL": "C",
            "SLURM_CONF": str(self.root / "slurm.conf"),
            "HYPERPOD_HA_PROBE_TIMEOUT": "3",
            "HYPERPOD_HA_TRIGGER_DIR": str(self.program_dir),
        }
        # The triggers' install writes where a controller keeps their program: here, this node's.
        command = moved(command, "/usr/local/libexec/hyperpod-ha", str(self.program_dir))
        return subprocess.run(
            shlex.split(command),
            capture_output=True,
            text=True,
            env=env,
            timeout=deadline_seconds,
            check=False,
        )

    def close(self) -> None:
        self._daemon_as(None)

    def _daemon_as(self, wanted: SlurmctldState | None) -> None:
        if wanted in ("running", "hung"):
            if self._daemon is None or self._daemon.poll() is not None:
                self._daemon = subprocess.Popen(["sleep", "3600"])
            os.kill(self._daemon.pid, signal.SIGSTOP if wanted == "hung" else signal.SIGCONT)
            return
        if self._daemon is not None:
            os.kill(self._daemon.pid, signal.SIGCONT)
            self._daemon.kill()
            self._daemon.wait()
            self._daemon = None

    def _capture(self, name: str) -> str:
        return (self.captures / name).read_text()

    def _prints(self, name: str, rc: int) -> str:
        return f"cat '{self.captures / name}'; exit {rc}"

    def _write_slurm_conf(self, state: ControllerState, log: Path) -> None:
        """The shared slurm.conf, and this node's: the link to it or a local copy with changes."""
        hosts = [f"SlurmctldHost={c.name}({c.address})" for c in self.controllers]
        programs = [f"SlurmctldPrimary{slot}Prog={path}" for slot, path in self._programs().items()]
        lines = [
            f"ClusterName={self.cluster}",
            *hosts,
            "SlurmctldTimeout=10",
            f"StateSaveLocation={self.shared_state}",
            f"SlurmctldLogFile={log}",
            "# Slurmctld settings",
            *programs,
        ]
        self.shared_conf.parent.mkdir(parents=True, exist_ok=True)
        shared = "\n".join(lines) + "\n"
        if not self.shared_conf.exists() or self.shared_conf.read_text() != shared:
            self.shared_conf.write_text(shared)
        conf = self.root / "slurm.conf"
        conf.unlink(missing_ok=True)
        if state.slurm_conf == "shared":
            conf.symlink_to(self.shared_conf)
            return
        for key, replacement in state.conf_changes:
            kept = [line for line in lines if line.split("=", 1)[0] != key]
            at = next((i for i, line in enumerate(lines) if line.split("=", 1)[0] == key), len(kept))
            lines = kept[:at] + [f"{key}={value}" for value in replacement] + kept[at:]
        conf.write_text("\n".join(lines) + "\n")

    def _programs(self) -> dict[str, Path]:
        return {slot: self.shared_dir / "bin" / f"slurmctld_primary_{slot.lower()}" for slot in ("On", "Off")}

    def _write_programs(self, mode: str) -> dict[str, Path]:
        """The ON/OFF programs on the shared file system, as this node sees them."""
        programs = self._programs()
        for path in programs.values():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.unlink(missing_ok=True)
            if mode != "missing":
                path.write_text("#!/bin/sh\n# would publish the controller status change\nexit 0\n")
                path.chmod(0o755 if mode == "executable" else 0o644)
        return programs

    def _commands(self, commands: dict[str, str]) -> None:
        for name, body in commands.items():
            path = self.root / "bin" / name
            path.write_text("#!/bin/bash\n" + body)
            path.chmod(path.stat().st_mode | stat.S_IXUSR)


# strigger as Slurm 24.11/25.11 prints and checks (src/strigger/strigger.c): --get prints a header
# and "%7u %-9s %7s %-35s %6d %-8s %-5s %s" per trigger; --set refuses a program whose path (the
# text before the first space) is not a regular file.
_STRIGGER = r"""table='@TABLE@'
touch "$table"
case "$1" in
  --get)
    [ -s "$table" ] || exit 0
    echo 'TRIG_ID RES_TYPE   RES_ID TYPE                                OFFSET USER     FLAGS PROGRAM'
    cat "$table"
    ;;
  --set)
    flags="" event="" program=""
    for a in "$@"; do
      case "$a" in
        --flags=PERM) flags=PERM ;;
        --program=*) program=${a#--program=} ;;
        --set) ;;
        --*) event=${a#--} ;;
      esac
    done
    [ -f "${program%% *}" ] || { echo "Invalid --program value, file not found"; exit 1; }
    printf '%7u %-9s %7s %-35s %6d %-8s %-5s %s\n' "$(($(wc -l <"$table") + 1))" slurmctld '*' "$event" 0 \
      "$(id -un)" "$flags" "$program" >>"$table"
    ;;
  *) exit 2 ;;
esac
"""
