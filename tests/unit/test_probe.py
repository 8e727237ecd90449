"""The probe script itself, run by bash with fake Slurm commands that print captured output.

Each test builds a fake controller in a temporary directory: ``bin/`` holds ``scontrol``,
``sinfo``, ``sdiag``, ``sacctmgr``, ``systemctl``, ``pgrep``, ``uname`` and ``ip`` scripts that
print the fixture files; ``state/`` is StateSaveLocation with a captured heartbeat; the
slurmctld log is a captured one. A ``sleep`` process stands in for slurmctld.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hyperpod_ha.commands import CommandResult
from hyperpod_ha.health import ControllerNode, ReportStatus, report_from_result
from hyperpod_ha.probe import MAX_COMMAND_BYTES, probe_command, probe_script
from hyperpod_ha.slurm import SECTIONS, parse_probe_output, parse_services
from hyperpod_ha_dev import CAPTURES

SCRIPT = Path(__file__).resolve().parents[2] / "layers" / "hyperpod_ha" / "probe" / "controller_probe.sh"
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
]

NODE = ControllerNode(
    instance_id="i-0000000000000ctl1",
    group="controller-machine",
    status="Running",
    private_ip="10.214.0.11",
    hostname="ip-10-214-0-11",
    target="sagemaker-cluster:hplab0000001_controller-machine-i-0000000000000ctl1",
)


def fixture(name: str) -> str:
    return (CAPTURES / name).read_text()


def command_script(body: str) -> str:
    return "#!/bin/bash\n" + body


def prints(name: str, rc: int = 0) -> str:
    return f"cat '{CAPTURES / name}'\nexit {rc}\n"


@dataclass
class FakeController:
    """A fake controller on disk; ``commands`` maps a command name to its bash body."""

    root: Path
    commands: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    daemon: subprocess.Popen[bytes] | None = None

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


@pytest.fixture
def controller(tmp_path: Path) -> Iterator[FakeController]:
    """ctl1 as in capture 03: primary, all up, slurmdbd answering."""
    fake = FakeController(root=tmp_path)
    fake.state.mkdir()
    shutil.copy(CAPTURES / "heartbeat_writer0.bin", fake.state / "heartbeat")
    fake.log.write_text(fixture("slurmctld_log_ctl1_primary.txt"))
    # A process standing in for slurmctld: the probe reads its /proc status.
    fake.daemon = subprocess.Popen(["sleep", "600"])
    (tmp_path / "show_config.txt").write_text(fake.show_config())
    fake.commands = {
        "scontrol": (
            'case "$1" in\n'
            f"  ping) {prints('ping_all_up.txt')};;\n"
            f"  show) cat '{tmp_path / 'show_config.txt'}'; exit 0;;\n"
            "esac\nexit 2\n"
        ),
        "sinfo": prints("sinfo_idle.txt"),
        "sdiag": "echo 'DBD Agent queue size: 0'\necho 'Server thread count: 3'\necho 'Other: 1'\n",
        "sacctmgr": (
            f'case "$*" in\n  *ping*) {prints("sacctmgr_ping_invalid_keyword.txt", 1)};;\n'
            f"  *) {prints('sacctmgr_cluster_ctl1.txt')};;\nesac\n"
        ),
        "systemctl": 'echo active\n[ "$2" = slurmctld ] || exit 3\n',
        "pgrep": f'[ "$2" = slurmctld ] && echo {fake.daemon.pid}\nexit 0\n',
        "uname": "echo ctl1\n",
        "ip": (
            "echo '1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever'\n"
            "echo '2: eth0    inet 10.214.0.11/24 brd 10.214.0.255 scope global eth0\\   valid_lft forever'\n"
            "echo '2: eth0    inet6 fe80::1/64 scope link \\       valid_lft forever preferred_lft forever'\n"
        ),
    }
    yield fake
    for process in (fake.daemon,):
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()


def test_probe_command_is_one_line_the_agent_can_split(controller: FakeController) -> None:
    command = probe_command()
    assert len(command) < MAX_COMMAND_BYTES
    assert "\n" not in command
    program, flag, pipeline = shlex.split(command)
    assert (program, flag) == ("bash", "-c")
    echo, encoded, *rest = pipeline.split(" ")
    assert echo == "echo"
    assert rest == ["|", "base64", "-d", "|", "bash"]
    assert set(encoded) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
    assert probe_script() == SCRIPT.read_text()


def test_probe_reports_every_section_of_a_healthy_primary(controller: FakeController) -> None:
    text = controller.run()
    output = parse_probe_output(text)
    assert output.complete
    assert list(output.sections) == list(SECTIONS)
    assert text.rstrip("\n").splitlines()[-1].startswith("HYPERPOD_HA_PROBE_RESULT {")
    for name in (
        "ping",
        "config",
        "sinfo",
        "sdiag",
        "dbd_clusters",
        "role",
        "heartbeat",
        "state_save",
        "services",
    ):
        assert output.sections[name].exit_code == 0, name
    assert output.sections["dbd_ping"].exit_code == 1  # 22.05: invalid keyword: ping
    assert output.sections["slurm_conf"].exit_code == 1  # none on this machine's paths: not needed
    # show config and sdiag keep only the lines the checks need
    assert "AccountingStorageType" in output.sections["config"].text
    assert "ProctrackType" not in output.sections["config"].text
    assert output.sections["sdiag"].text.splitlines() == ["DBD Agent queue size: 0", "Server thread count: 3"]

    report = report_from_result(NODE, CommandResult(text, "", 0, 0.5, "test"))
    assert report.status is ReportStatus.CHECKED
    assert (report.node.controller_index, report.node.controller_name) == (0, "ctl1")
    assert report.node.addresses == ("10.214.0.11",)
    assert [(p.label, p.responding) for p in report.ping.lines] == [("primary", True), ("backup", True)]
    assert report.slurmctld.running is True
    assert report.slurmctld.pids == (controller.daemon.pid,) if controller.daemon else False
    assert report.slurmctld.systemctl == "active"
    assert report.slurmdbd.running is False
    assert report.role.logged == "primary"
    assert report.role.line == "[2026-11-29T23:29:53.870] Running as primary controller"
    assert (report.heartbeat.readable, report.heartbeat.writer_index, report.heartbeat.beat_time) == (
        True,
        0,
        1795995004,
    )
    assert report.state_save.exists is True
    assert report.state_save.writable is True
    assert report.state_save.mount_target
    assert report.state_save.fstype
    assert (report.dbd.reachable, report.dbd.registered_host, report.dbd.ping_supported) == (
        True,
        "10.214.0.11",
        False,
    )
    assert report.dbd.agent_queue_size == 0
    assert report.scheduler.answers is True
    assert report.config.cluster_name == "lab"


def listing(directory: Path) -> list[tuple[str, int, int]]:
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in directory.iterdir())


def test_probe_changes_nothing(controller: FakeController) -> None:
    before = listing(controller.state)
    log_before = controller.log.stat().st_mtime_ns
    controller.run()
    assert listing(controller.state) == before
    assert controller.log.stat().st_mtime_ns == log_before
    assert list((controller.root / "tmp").iterdir()) == []  # its work directory is gone


def test_the_write_test_creates_an_unguessable_file_exclusively(controller: FakeController) -> None:
    # StateSaveLocation belongs to SlurmUser: a file root creates there under a name it can
    # guess can be a symlink planted by SlurmUser. mktemp (O_EXCL, random name) cannot.
    calls = controller.root / "mktemp.calls"
    controller.commands["mktemp"] = (
        f'printf "%s\\n" "$*" >>{shlex.quote(str(calls))}\nexec /usr/bin/mktemp "$@"\n'
    )
    # A symlink at the old scheme's kind of name is never followed nor removed.
    target = controller.root / "victim"
    (controller.state / ".hyperpod-ha-probe.1.1").symlink_to(target)
    before = sorted(p.name for p in controller.state.iterdir())
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert report.state_save.writable is True
    in_state = [line for line in calls.read_text().splitlines() if str(controller.state) in line]
    assert in_state == [f"-p {controller.state} .hyperpod-ha-probe.XXXXXXXXXX"]
    assert sorted(p.name for p in controller.state.iterdir()) == before
    assert not target.exists()


def test_probe_runs_the_same_through_its_command_line(controller: FakeController) -> None:
    # Fed to bash on stdin: a command reading stdin must not swallow the rest of the script.
    controller.commands["sdiag"] = "cat >/dev/null\necho 'DBD Agent queue size: 7'\n"
    output = parse_probe_output(controller.run(via_command=True))
    assert output.complete
    assert list(output.sections) == list(SECTIONS)
    assert output.sections["sdiag"].text == "DBD Agent queue size: 7"


def test_a_hung_slurmctld_does_not_hang_the_probe(controller: FakeController) -> None:
    # scontrol against a stopped slurmctld blocks; the probe kills it at its time limit.
    controller.commands["scontrol"] = controller.commands["scontrol"].replace(
        f"ping) cat '{CAPTURES / 'ping_all_up.txt'}'", "ping) exec sleep 600"
    )
    controller.commands["sinfo"] = "trap '' TERM\nwhile :; do sleep 1; done\n"  # ignores SIGTERM
    controller.env["HYPERPOD_HA_PROBE_TIMEOUT"] = "2"
    started = time.monotonic()
    text = controller.run(timeout=30)
    elapsed = time.monotonic() - started
    assert elapsed < 12
    output = parse_probe_output(text)
    assert output.complete
    assert output.sections["ping"].ran_out_of_time
    assert output.sections["sinfo"].ran_out_of_time
    assert output.sections["config"].exit_code == 0  # everything else still answered
    report = report_from_result(NODE, CommandResult(text, None, None, 1, "t"))
    assert report.status is ReportStatus.CHECKED
    assert report.ping.error is not None
    assert "timed out" in report.ping.error
    assert report.scheduler.answers is False


def test_a_hung_state_directory_read_is_abandoned(controller: FakeController) -> None:
    # od reading the heartbeat on a hung file system: killed, reported as unreadable.
    controller.commands["od"] = "trap '' TERM\nsleep 600\n"
    controller.env["HYPERPOD_HA_PROBE_TIMEOUT"] = "2"
    started = time.monotonic()
    text = controller.run(timeout=30)
    assert time.monotonic() - started < 12
    report = report_from_result(NODE, CommandResult(text, None, None, 1, "t"))
    assert report.heartbeat.readable is False
    assert report.heartbeat.error is not None
    assert "timed out" in report.heartbeat.error


def test_unwritable_state_save_location(controller: FakeController) -> None:
    # /proc/1 exists, and nobody (root included) can create a file in it.
    (controller.root / "show_config.txt").write_text(controller.show_config(state=Path("/proc/1")))
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert report.state_save.exists is True
    assert report.state_save.writable is False
    assert report.state_save.write_error == "No such file or directory"
    assert report.state_save.fstype == "proc"
    assert report.heartbeat.readable is False
    assert report.heartbeat.error == "heartbeat file does not exist"


def test_slurm_conf_stands_in_when_slurmctld_does_not_answer(controller: FakeController) -> None:
    controller.commands["scontrol"] = (
        'case "$1" in\n'
        f"  ping) {prints('ping_both_down.txt', 1)};;\n"
        "  show) echo 'slurm_load_ctl_conf error: Unable to contact slurm controller'; exit 1;;\n"
        "esac\n"
    )
    conf = controller.root / "slurm.conf"
    conf.write_text(
        "ClusterName=lab\n"
        "SlurmctldHost=ctl1(10.214.0.11)\n"
        "SlurmctldHost=ctl2(10.214.0.12)\n"
        "SlurmctldTimeout=10\n"
        f"StateSaveLocation={controller.state}  # shared\n"
        f"SlurmctldLogFile={controller.log}\n"
        "NodeName=node[1-2] CPUs=1\n"
    )
    controller.env["SLURM_CONF"] = str(conf)
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert report.config.source == "slurm.conf"
    assert report.config.error is not None
    assert "slurm_load_ctl_conf error: Unable to contact slurm controller" in report.config.error
    assert [c.name for c in report.config.controllers] == ["ctl1", "ctl2"]
    assert report.heartbeat.writer_index == 0  # found through slurm.conf's StateSaveLocation
    assert report.role.logged == "primary"
    assert [p.responding for p in report.ping.lines] == [False, False]


def test_role_from_the_journal_when_there_is_no_log_file(controller: FakeController) -> None:
    (controller.root / "show_config.txt").write_text(
        controller.show_config().replace(
            f"SlurmctldLogFile        = {controller.log}", "SlurmctldLogFile        = (null)"
        )
    )
    # journalctl -r prints the newest line first
    controller.commands["journalctl"] = (
        "echo '2026-11-29T23:30:42+0000 ctl2 slurmctld[7891]: Running as primary controller'\n"
        "echo '2026-11-29T23:30:41+0000 ctl2 slurmctld[7891]: error: ControlMachine ctl1 not responding, "
        "BackupController1 ctl2 taking over'\n"
        "echo '2026-11-29T23:29:53+0000 ctl2 slurmctld[7891]: slurmctld running in background mode'\n"
    )
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert report.role.source == "journal:slurmctld"
    assert report.role.logged == "primary"


def test_without_pgrep_and_systemctl_the_probe_reads_proc(controller: FakeController) -> None:
    del controller.commands["pgrep"]
    del controller.commands["systemctl"]
    # A process whose name is slurmctld (a copy of sleep), found by scanning /proc.
    daemon_binary = controller.root / "slurmctld"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", daemon_binary)
    daemon = subprocess.Popen([str(daemon_binary), "30"])
    try:
        text = controller.run(restricted_path=True)
    finally:
        daemon.send_signal(signal.SIGKILL)
        daemon.wait()
    output = parse_probe_output(text)
    services = parse_services(output.sections["services"].text)
    assert services.systemctl == {"slurmctld": "unavailable", "slurmdbd": "unavailable"}
    mine = [p for p in services.processes if p.pid == daemon.pid]
    assert len(mine) == 1
    assert mine[0].same_namespace is True
    report = report_from_result(NODE, CommandResult(text, None, None, 1, "t"))
    assert daemon.pid in report.slurmctld.pids
    assert report.slurmctld.running is True


def test_a_stopped_slurmctld_is_seen_stopped(controller: FakeController) -> None:
    assert controller.daemon is not None
    os.kill(controller.daemon.pid, signal.SIGSTOP)
    try:
        report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    finally:
        os.kill(controller.daemon.pid, signal.SIGCONT)
    assert report.slurmctld.running is False
    assert report.slurmctld.stopped is True
    assert report.slurmctld.process_state == "T"


def test_slurmdbd_down_and_the_agent_queue(controller: FakeController) -> None:
    controller.commands["sacctmgr"] = (
        f'case "$*" in\n  *ping*) {prints("sacctmgr_ping_refused.txt", 1)};;\n'
        f"  *) {prints('sacctmgr_cluster_refused.txt', 1)};;\nesac\n"
    )
    controller.commands["sdiag"] = prints("sdiag_dbd_queue_growing.txt")
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert report.dbd.reachable is False
    assert report.dbd.error is not None
    assert report.dbd.error.endswith("Connection refused")
    assert report.dbd.agent_queue_size == 3
    assert report.dbd.ping_supported is False


def test_long_output_is_truncated_and_marked(controller: FakeController) -> None:
    controller.commands["sinfo"] = 'for i in $(seq 1 3000); do echo "idle $i"; done\n'
    output = parse_probe_output(controller.run())
    assert output.sections["sinfo"].truncated
    assert len(output.sections["sinfo"].text) <= 12288


def test_a_probe_that_cannot_start_says_why(controller: FakeController) -> None:
    controller.env["TMPDIR"] = str(controller.root / "no-such-directory")
    text = controller.run(exit_code=70)
    output = parse_probe_output(text)
    assert not output.complete
    assert output.error == "cannot create a temporary directory"
    report = report_from_result(NODE, CommandResult(text, "", 70, 0.1, "t"))
    assert report.status is ReportStatus.PROBE_FAILED
    assert report.reason == "probe failed on the node: cannot create a temporary directory"
