"""A controller host for the probe script: bash runs the real script with fake Slurm commands.

Each test builds one in a temporary directory: ``bin/`` holds ``scontrol``,
``sinfo``, ``sdiag``, ``sacctmgr``, ``systemctl``, ``pgrep``, ``uname`` and ``ip`` scripts that
print the fixture files; ``state/`` is StateSaveLocation with a captured heartbeat; the
slurmctld log is a captured one. A copy of ``sleep`` at ``sbin/slurmctld`` stands in for
slurmctld: the binary ``systemctl show slurmctld`` names (its ExecStart), run by this test's
user (root, or SlurmUser in the configuration when the tests run as another user).
"""

from __future__ import annotations

import getpass
import os
import shlex
import shutil
import stat
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hyperpod_ha.controllers.models import Controller
from hyperpod_ha.probe import probe_command
from hyperpod_ha_dev import CAPTURES
from tests.conftest import ROOT

SCRIPT = ROOT / "layers" / "hyperpod_ha" / "probe" / "controller_probe.sh"
# What the probe needs from the system besides the faked commands (for the restricted PATH).
SYSTEM_TOOLS = [
    "bash",
    "timeout",
    "sleep",
    "date",
    "cat",
    "grep",
    "sed",
    "tac",
    "od",
    "stat",
    "head",
    "tail",
    "tr",
    "mktemp",
    "rm",
    "mv",
    "wc",
    "readlink",
    "id",
    "base64",
    "findmnt",
    "df",
    "runuser",
    "hostname",
    "test",
    "sha256sum",
]

NODE = Controller(
    instance_id="i-0000000000000ctl1",
    group="controller-machine",
    status="Running",
    private_ip="10.214.0.11",
    hostname="ip-10-214-0-11",
    target="sagemaker-cluster:hplab0000001_controller-machine-i-0000000000000ctl1",
)


# The body of `ip`: `ip -o addr` as ctl1 prints it.
CTL1_ADDRESSES = (
    "echo '1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever'\n"
    "echo '2: eth0    inet 10.214.0.11/24 brd 10.214.0.255 scope global eth0\\   valid_lft forever'\n"
    "echo '2: eth0    inet6 fe80::1/64 scope link \\       valid_lft forever preferred_lft forever'\n"
)


def fixture(name: str) -> str:
    return (CAPTURES / name).read_text()


def command_script(body: str) -> str:
    return "#!/bin/bash\n" + body


def prints(name: str, rc: int = 0) -> str:
    return f"cat '{CAPTURES / name}'\nexit {rc}\n"


@dataclass
class ProbeHost:
    """A controller host on disk; ``commands`` maps a command name to its bash body, which a
    test may change before ``run``.

    (The simulation's controller, ``hyperpod_ha_dev.simulation.fake_controller``, plays whole
    scenarios and always has a slurm.conf; the probe's tests change one command at a time.)"""

    root: Path
    commands: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    daemon: subprocess.Popen[bytes] | None = None

    @classmethod
    def ctl1_primary(cls, root: Path) -> ProbeHost:
        """ctl1 as in capture 03: primary, all up, slurmdbd answering (``close`` it after)."""
        host = cls(root=root)
        host.state.mkdir()
        shutil.copy(CAPTURES / "heartbeat_writer0.bin", host.state / "heartbeat")
        host.log.write_text(fixture("slurmctld_log_ctl1_primary.txt"))
        # A process standing in for slurmctld: the probe reads its /proc status and executable.
        host.daemon = host.start_daemon()
        (root / "show_config.txt").write_text(host.show_config())
        host.commands = {
            "scontrol": (
                'case "$1" in\n'
                f"  ping) {prints('ping_all_up.txt')};;\n"
                f"  show) cat '{root / 'show_config.txt'}'; exit 0;;\n"
                "esac\nexit 2\n"
            ),
            "sinfo": prints("sinfo_idle.txt"),
            "sdiag": "echo 'DBD Agent queue size: 0'\necho 'Server thread count: 3'\necho 'Other: 1'\n",
            "sacctmgr": (
                f'case "$*" in\n  *ping*) {prints("sacctmgr_ping_invalid_keyword.txt", 1)};;\n'
                f"  *) {prints('sacctmgr_cluster_ctl1.txt')};;\nesac\n"
            ),
            "uname": "echo ctl1\n",
            "ip": CTL1_ADDRESSES,
        }
        host.name_slurmctld([host.daemon.pid], host.daemon_binary)
        return host

    def name_slurmctld(self, pids: Sequence[int], binary: Path, main_pid: int = 0) -> None:
        """``pgrep -x slurmctld`` gives ``pids``; ``systemctl show slurmctld`` says its unit runs
        ``binary``, its main PID ``main_pid`` (0: none)."""
        listed = "".join(f"echo {pid}; " for pid in pids)
        self.commands["pgrep"] = f'[ "$2" = slurmctld ] && {{ {listed}}}\nexit 0\n'
        self.commands["systemctl"] = (
            'case "$1" in\n'
            f"  show) echo MainPID={main_pid}; echo 'ExecStart={{ path={binary} ; argv[]=x ; }}';;\n"
            '  *) echo active; [ "$2" = slurmctld ] || exit 3;;\n'
            "esac\n"
        )

    def close(self) -> None:
        if self.daemon is not None and self.daemon.poll() is None:
            self.daemon.kill()
            self.daemon.wait()

    @property
    def daemon_binary(self) -> Path:
        """The node's Slurm binary, ``sbin/slurmctld``: a copy of ``sleep``."""
        binary = self.root / "sbin" / "slurmctld"
        if not binary.exists():
            binary.parent.mkdir(exist_ok=True)
            shutil.copy(shutil.which("sleep") or "/bin/sleep", binary)
        return binary

    def start_daemon(self, binary: Path | None = None, user: str | None = None) -> subprocess.Popen[bytes]:
        """A process of ``binary`` (the node's Slurm binary by default) sleeping 600 s, run as
        ``user`` (this test's user by default)."""
        return subprocess.Popen([str(binary or self.daemon_binary), "600"], user=user)

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def log(self) -> Path:
        return self.root / "slurmctld.log"

    def show_config(self, state: Path | None = None, log: Path | None = None) -> str:
        return (
            fixture("show_config_lab.txt").replace("/srv/hplab/shared/state", str(state or self.state))
            + fixture("show_config_accounting_lab.txt")
            + f"SlurmctldLogFile        = {log or self.log}\n"
            # Not root: this test's user runs the stand-in, so it is SlurmUser.
            + ("" if os.getuid() == 0 else f"SlurmUser               = {getpass.getuser()}({os.getuid()})\n")
        )

    def write_commands(self) -> None:
        self.bin.mkdir(exist_ok=True)
        for name, body in self.commands.items():
            path = self.bin / name
            path.write_text(command_script(body))
            path.chmod(path.stat().st_mode | stat.S_IXUSR)

    def run(
        self,
        *,
        timeout: float = 60,
        restricted_path: bool = False,
        via_command: bool = False,
        exit_code: int = 0,
    ) -> str:
        self.write_commands()
        path = f"{self.bin}:{self.system_bin() if restricted_path else '/usr/bin:/bin:/usr/sbin:/sbin'}"
        env = {"PATH": path, "TMPDIR": str(self.root / "tmp"), "LC_ALL": "C", **self.env}
        (self.root / "tmp").mkdir(exist_ok=True)
        argv = shlex.split(probe_command()) if via_command else ["bash", str(SCRIPT)]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, check=False)
        assert done.stderr == ""  # the probe merges stderr into its sections
        assert done.returncode == exit_code, done.stdout
        return done.stdout

    def system_bin(self) -> Path:
        system = self.root / "system"
        system.mkdir(exist_ok=True)
        for tool in SYSTEM_TOOLS:
            found = shutil.which(tool, path="/usr/bin:/bin:/usr/sbin:/sbin")
            assert found, tool
            if not (system / tool).exists():
                (system / tool).symlink_to(found)
        return system
