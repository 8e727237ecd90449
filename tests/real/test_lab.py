"""The real Slurm HA lab: controllers in network namespaces, a shared state directory,
slurmdbd on the local MariaDB, compute nodes that run jobs, faults and a clean teardown.

Needs root, network namespaces and the MariaDB server at 127.0.0.1:3306; skipped with the
reason otherwise, except under CI=true where a missing prerequisite fails the run.
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hyperpod_ha.commands import CommandRequest, CommandTimedOut, TargetUnreachable, runner_for
from hyperpod_lab import Heartbeat, Lab, LabConfigError, LabError, Topology
from hyperpod_lab.accounting_db import AdminConnection
from hyperpod_lab.config import check_db_password, slurm_conf
from hyperpod_lab.packages import ensure_packages
from hyperpod_lab.preflight import missing_prerequisite
from hyperpod_lab.processes import command_name, pid_namespace
from hyperpod_lab.releases import release
from hyperpod_lab.runner import LabRequestError, LabRunner, command_line
from hyperpod_lab.topology import BRIDGE, CLUSTER_NAME, DB_NAME, PREFIX, SLURMCTLD_TIMEOUT_SECONDS

pytestmark = [pytest.mark.lab, pytest.mark.slow]

DOCUMENT = "AWS-StartNonInteractiveCommand"
# The Slurm release the lab runs: 24.11 (HyperPod's) unless CI's smaller 22.05 run asks.
SLURM = os.environ.get("HYPERPOD_LAB_SLURM", "24.11")
# Takeover needs SlurmctldTimeout without an answer plus the backup's next check (the
# captures saw 10-12 s with 10 s); the margin absorbs a loaded two-core machine.
TAKEOVER_MARGIN_SECONDS = 8.0


@pytest.fixture(scope="module")
def db_password() -> str:
    return secrets.token_urlsafe(18)


@pytest.fixture(scope="module")
def lab(db_password: str) -> Iterator[Lab]:
    missing = missing_prerequisite()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing} (CI=true: the lab tests must run)")
        pytest.skip(missing)
    ensure_packages(release(SLURM).packages)
    # One lab per machine (its names are fixed): keep parallel test workers apart.
    with (Path(tempfile.gettempdir()) / "hyperpod-lab.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lab = Lab(Topology(controllers=2, nodes=2, slurm=SLURM))
        try:
            yield lab
        finally:
            lab.down()


@pytest.fixture
def running(lab: Lab, db_password: str) -> Lab:
    """The lab, up: reused when healthy, so each test is independent of the others' order."""
    lab.up(db_password, install_packages=False)
    return lab


def _request(target: str, command: str, deadline: float = 15.0) -> CommandRequest:
    return CommandRequest(target, DOCUMENT, deadline, {"command": [command]})


def _wait_for(check: Callable[[], bool], timeout: float, interval: float = 0.2) -> float:
    """Seconds until ``check()`` was true; fails the test after ``timeout``."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout:
            pytest.fail(f"condition not met within {timeout} s")
        time.sleep(interval)
    return time.monotonic() - started


def test_up_builds_the_controller_group_quickly(lab: Lab, db_password: str) -> None:
    lab.down()
    report = lab.up(db_password, install_packages=False)

    assert not report.reused
    assert report.seconds < 30  # lab.md saw 7-9 s including packages and a test job
    controllers = lab.controllers()
    assert [c["hostname"] for c in controllers] == ["ctl1", "ctl2"]
    assert {c["status"] for c in controllers} == {"Running"}
    assert len({c["instance_id"] for c in controllers}) == 2
    for controller in controllers:
        assert re.fullmatch(r"i-[0-9a-f]{17}", controller["instance_id"])
        assert controller["target"].endswith(f"_{controller['group']}-{controller['instance_id']}")
        assert controller["target"].startswith("sagemaker-cluster:")
    ping = lab.client(["scontrol", "ping"])
    assert ping.stdout.splitlines() == ["Slurmctld(primary) at ctl1 is UP", "Slurmctld(backup) at ctl2 is UP"]
    beat = lab.heartbeat()
    assert beat is not None
    assert beat.writer_index == 0


def test_up_again_reuses_the_running_lab(running: Lab, db_password: str) -> None:
    before = running.status()

    report = running.up(db_password, install_packages=False)

    assert report.reused
    assert report.seconds < 5
    assert running.status()["hosts"] == before["hosts"]


def test_up_with_another_password_rebuilds(running: Lab) -> None:
    pid = running.pid("ctl1", "slurmctld")

    report = running.up(secrets.token_urlsafe(18), install_packages=False)

    assert not report.reused
    assert running.pid("ctl1", "slurmctld") != pid


def test_a_job_runs_on_every_node_and_is_accounted(running: Lab) -> None:
    job = running.client(["srun", "--nodes=2", "--ntasks-per-node=1", "--label", "hostname"], timeout=30)

    assert job.returncode == 0, job.stderr
    assert sorted(job.stdout.splitlines()) == ["0: node1", "1: node2"]

    def accounted() -> bool:
        sacct = running.exec("ctl1", ["sacct", "-X", "-n", "-P", "-o", "jobname,state,nodelist"])
        return "hostname|COMPLETED|node[1-2]" in sacct.stdout.splitlines()

    _wait_for(accounted, timeout=15)


def test_runner_runs_scontrol_ping_on_each_controller(running: Lab) -> None:
    runner = LabRunner(running)
    expected = ["Slurmctld(primary) at ctl1 is UP", "Slurmctld(backup) at ctl2 is UP"]

    for controller in running.controllers():
        ping = runner.run(_request(controller["target"], "scontrol ping"))
        name = runner.run(_request(controller["target"], "hostname"))

        assert ping.stdout.splitlines() == expected
        assert ping.exit_code == 0
        assert ping.transport == "lab"
        assert ping.stderr == ""
        assert 0 < ping.duration_seconds < 15
        assert name.stdout == f"{controller['hostname']}\n"


def test_runner_is_the_lab_transport(running: Lab) -> None:
    runner = runner_for("lab")

    result = runner.run(_request("ctl2", "hostname"))

    assert runner.transport == "lab"
    assert result.stdout == "ctl2\n"


def test_runner_splits_like_a_shell_but_runs_no_shell(running: Lab) -> None:
    result = LabRunner(running).run(_request("ctl1", "echo 'a  b' ; $HOME \"c d\""))

    assert result.stdout == "a  b ; $HOME c d\n"


def test_runner_reports_exit_codes_and_stderr(running: Lab) -> None:
    runner = LabRunner(running)

    missing = runner.run(_request("ctl1", "no-such-program --flag"))
    bad = runner.run(_request("ctl1", "sacctmgr -n no-such-keyword"))
    ping = runner.run(_request("ctl1", "sacctmgr -n ping"))

    assert missing.exit_code == 127
    assert bad.exit_code == 1
    assert "invalid keyword: no-such-keyword" in (bad.stderr or "") + bad.stdout
    if SLURM == "22.05":  # sacctmgr ping came later
        assert ping.exit_code == 1
        assert "invalid keyword: ping" in (ping.stderr or "") + ping.stdout
    else:
        # AccountingStorageHost=localhost: each controller's own slurmdbd
        assert (ping.exit_code, ping.stdout) == (0, "slurmdbd(primary) at localhost is UP\n")


def test_runner_enforces_the_deadline(running: Lab) -> None:
    started = time.monotonic()

    # A duration nothing else on the machine sleeps for: only this command's process matches.
    with pytest.raises(CommandTimedOut):
        LabRunner(running).run(_request("ctl1", "sleep 29.731", deadline=0.5))

    assert time.monotonic() - started < 3
    # Only the lab host's own processes: other work on the machine may sleep too.
    host = pid_namespace(running.holder("ctl1"))
    assert not [
        pid
        for pid, name in _processes()
        if name == "sleep" and "29.731" in _cmdline(pid) and pid_namespace(pid) == host
    ]


def test_runner_rejects_unknown_targets_and_bad_requests(running: Lab) -> None:
    runner = LabRunner(running)
    ctl1 = running.controllers()[0]

    with pytest.raises(TargetUnreachable):
        runner.run(_request("sagemaker-cluster:abc_controller-machine-i-0123456789abcdef0", "hostname"))
    with pytest.raises(TargetUnreachable):
        runner.run(_request(ctl1["target"].replace("controller-machine", "worker-group-1"), "hostname"))
    with pytest.raises(LabRequestError):
        runner.run(CommandRequest("ctl1", DOCUMENT, 5, {}))
    with pytest.raises(LabRequestError):
        runner.run(_request("ctl1", "echo 'unbalanced"))


def test_each_controller_has_its_own_slurmdbd(running: Lab, db_password: str) -> None:
    paths = running.paths
    confs = {name: paths.host_etc(name) / "slurmdbd.conf" for name in ("ctl1", "ctl2")}
    for name, conf in confs.items():
        assert conf.stat().st_mode & 0o777 == 0o600
        assert f"DbdHost={name}\n" in conf.read_text()
        assert f"StoragePass={db_password}\n" in conf.read_text()
        assert running.pid(name, "slurmdbd") is not None

    def show_cluster(name: str) -> subprocess.CompletedProcess[str]:
        return _show_cluster(running, name)

    # Both slurmdbds read the one database: the same cluster row from each controller. With
    # AccountingStorageHost=localhost (as on HyperPod) the registered host is the loopback.
    assert show_cluster("ctl1").stdout == show_cluster("ctl2").stdout == f"{CLUSTER_NAME}|127.0.0.1|6817\n"

    running.stop_slurmdbd("ctl2")
    try:
        stopped = show_cluster("ctl2")
        assert stopped.returncode == 1
        assert show_cluster("ctl1").returncode == 0
    finally:
        running.start_slurmdbd("ctl2")
    assert show_cluster("ctl2").returncode == 0


def test_slurmdbd_started_beside_a_dead_slurmctld_blanks_the_registration(running: Lab) -> None:
    # A starting slurmdbd asks the registered controller (localhost:6817 from its own host)
    # to register again and, when nobody answers there, blanks the row for every controller.
    # `scontrol reconfigure` registers the active controller again on 24.11, not on 22.05.
    running.kill_slurmctld("ctl2")
    running.stop_slurmdbd("ctl2")
    running.start_slurmdbd("ctl2")
    try:
        _wait_for(lambda: _show_cluster(running, "ctl1").stdout == f"{CLUSTER_NAME}||0\n", timeout=5)
        running.exec("ctl1", ["scontrol", "reconfigure"])
        time.sleep(1)
        mended = f"{CLUSTER_NAME}|127.0.0.1|6817\n" if SLURM != "22.05" else f"{CLUSTER_NAME}||0\n"
        assert _show_cluster(running, "ctl1").stdout == mended
    finally:
        running.start_slurmctld("ctl2")
        # Only a (re)start of the active slurmctld registers it again.
        running.kill_slurmctld("ctl1", signal.SIGTERM)
        running.start_slurmctld("ctl1")
    _wait_for(lambda: _show_cluster(running, "ctl2").stdout == f"{CLUSTER_NAME}|127.0.0.1|6817\n", timeout=10)


def test_systemctl_stand_in_restarts_a_hosts_own_daemons(running: Lab) -> None:
    runner = LabRunner(running)
    before = running.pid("ctl2", "slurmdbd")

    active = runner.run(_request("ctl1", "systemctl is-active slurmctld"))
    elsewhere = runner.run(_request("node1", "systemctl is-active slurmdbd"))
    restart = runner.run(_request("ctl2", "systemctl restart slurmdbd.service"))

    assert (active.exit_code, active.stdout) == (0, "active\n")
    assert (elsewhere.exit_code, elsewhere.stdout) == (3, "inactive\n")
    assert restart.exit_code == 0, restart.stderr
    _wait_for(lambda: _show_cluster(running, "ctl2").returncode == 0, timeout=10)
    after = running.pid("ctl2", "slurmdbd")
    assert after is not None
    assert after != before
    assert running.pid("ctl1", "slurmdbd") is not None


def test_the_controller_probe_sees_only_its_own_host(running: Lab) -> None:
    probe = pytest.importorskip("hyperpod_ha.probe")
    runner = LabRunner(running)

    for name in ("ctl1", "ctl2"):
        result = runner.run(_request(name, probe.probe_command(), deadline=60))

        assert result.exit_code == 0
        lines = result.stdout.splitlines()
        assert '"complete":true' in lines[-1]
        assert f"hostname={name}" in lines
        # A PID namespace per host: the probe finds this host's slurmctld only.
        slurmctlds = [line for line in lines if line.startswith("process slurmctld ")]
        assert len(slurmctlds) == 1
        assert slurmctlds[0].endswith("same_ns=yes")
        assert "systemctl slurmctld active" in lines


def test_password_appears_only_in_the_slurmdbd_confs(running: Lab, db_password: str) -> None:
    holders = []
    for path in running.paths.root.rglob("*"):
        if path.is_file() and not path.is_symlink() and db_password in path.read_text(errors="replace"):
            holders.append(path.relative_to(running.paths.root).as_posix())

    assert sorted(holders) == ["hosts/ctl1/etc/slurmdbd.conf", "hosts/ctl2/etc/slurmdbd.conf"]


def test_sigkill_of_the_primary_gives_takeover_by_the_backup(running: Lab) -> None:
    runner = LabRunner(running)
    ctl2_log_offset = len(running.log("ctl2"))
    killed_at = time.time()
    started = time.monotonic()

    running.kill_slurmctld("ctl1")

    def ctl2_active() -> bool:
        beat = running.heartbeat()
        log = running.log("ctl2")[ctl2_log_offset:]
        return (
            "Running as primary controller" in log
            and beat is not None
            and beat.writer_index == 1
            and beat.beat_time >= int(killed_at)
        )

    takeover = _wait_for(
        ctl2_active, timeout=SLURMCTLD_TIMEOUT_SECONDS + TAKEOVER_MARGIN_SECONDS, interval=0.1
    )
    assert takeover <= SLURMCTLD_TIMEOUT_SECONDS + TAKEOVER_MARGIN_SECONDS
    # The backup counts from its last answered ping, a few seconds before the kill at most.
    assert time.monotonic() - started >= SLURMCTLD_TIMEOUT_SECONDS / 2
    assert "ControlMachine ctl1 not responding, BackupController1 ctl2 taking over" in running.log("ctl2")

    # Restarting the primary while the backup is still becoming active gives two active
    # controllers for a while: wait until the backup serves, as an operator would.
    def ctl2_serves() -> bool:
        ping = runner.run(_request("ctl2", "scontrol ping")).stdout.splitlines()
        # Root also gets a "RESTORE SLURMCTLD DAEMON TO SERVICE" banner after the two lines.
        return ping[:2] == ["Slurmctld(primary) at ctl1 is DOWN", "Slurmctld(backup) at ctl2 is UP"]

    _wait_for(ctl2_serves, timeout=10)
    ctl1_log_offset = len(running.log("ctl1"))
    ctl2_log_offset = len(running.log("ctl2"))

    # 24.11 takes control back only after the active backup saved its state and stepped down
    # (about 30 s here): no wait for its ping.
    running.start_slurmctld("ctl1", wait=False)

    def ctl1_active_again() -> bool:
        beat = running.heartbeat()
        return (
            "Running as primary controller" in running.log("ctl1")[ctl1_log_offset:]
            and "running in background mode" in running.log("ctl2")[ctl2_log_offset:]
            and beat is not None
            and beat.writer_index == 0
        )

    _wait_for(ctl1_active_again, timeout=60)
    assert running.pid("ctl2", "slurmctld") is not None  # the backup went back to standby


def test_isolated_controller_is_unreachable_and_seen_down(running: Lab) -> None:
    runner = LabRunner(running)
    running.isolate("ctl2")
    try:
        with pytest.raises(TargetUnreachable):
            runner.run(_request("ctl2", "hostname"))
        ping = runner.run(_request("ctl1", "scontrol ping")).stdout.splitlines()
        assert ping[:2] == ["Slurmctld(primary) at ctl1 is UP", "Slurmctld(backup) at ctl2 is DOWN"]
    finally:
        running.reconnect("ctl2")
    assert runner.run(_request("ctl2", "hostname")).stdout == "ctl2\n"


def test_unwritable_state_stops_the_heartbeat(running: Lab) -> None:
    offset = len(running.log("ctl1"))
    running.make_state_unwritable()
    try:
        _wait_for(lambda: "heartbeat file creation failed" in running.log("ctl1")[offset:], timeout=10)
        touch = running.exec("ctl1", ["touch", str(running.paths.state_dir / "probe")])
        assert touch.returncode == 1
        assert "Read-only file system" in touch.stderr
    finally:
        running.restore_state_writable()
    resumed = time.time()

    def beating() -> bool:
        beat = running.heartbeat()
        return beat is not None and beat.beat_time >= int(resumed)

    _wait_for(beating, timeout=10)


def test_hung_primary_answers_nothing_until_continued(running: Lab) -> None:
    running.stop_slurmctld("ctl1")
    try:
        assert running.status()["hosts"]["ctl1"]["daemons"]["slurmctld"]["stopped"] is True  # type: ignore[index]
        ping = running.exec("ctl2", ["scontrol", "ping"]).stdout.splitlines()
        assert ping[:2] == ["Slurmctld(primary) at ctl1 is DOWN", "Slurmctld(backup) at ctl2 is UP"]
    finally:
        running.cont_slurmctld("ctl1")
    ping = running.exec("ctl2", ["scontrol", "ping"]).stdout.splitlines()
    assert ping == ["Slurmctld(primary) at ctl1 is UP", "Slurmctld(backup) at ctl2 is UP"]


def test_down_leaves_nothing_behind(running: Lab) -> None:
    pids = [running.pid(host, daemon) for host, daemon in (("ctl1", "slurmctld"), ("node1", "slurmd"))]

    removed = running.down()

    assert any(item.startswith("netns ") for item in removed)
    assert running.leftovers() == []
    assert not [name for name in _netns() if name.startswith(PREFIX)]
    assert subprocess.run(["ip", "link", "show", BRIDGE], capture_output=True, check=False).returncode != 0
    assert not _lab_databases()
    assert not running.paths.root.exists()
    assert pids[0] is not None
    assert pids[1] is not None
    assert not any(_running(pid) for pid in pids)
    assert not [name for _, name in _processes() if name in ("slurmctld", "slurmd", "slurmdbd", "slurmstepd")]
    assert running.controllers() == []
    with pytest.raises(TargetUnreachable):
        LabRunner(running).run(_request("ctl1", "hostname"))
    assert running.down() == []  # idempotent


def test_a_failed_up_leaves_nothing_behind(
    lab: Lab, db_password: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    def refuse() -> bool:
        raise LabError("injected failure while waiting for the nodes")

    lab.down()
    monkeypatch.setattr(lab, "_nodes_idle", refuse)

    with pytest.raises(LabError, match="injected failure"):
        lab.up(db_password, install_packages=False)

    assert lab.leftovers() == []
    assert db_password not in capfd.readouterr().out


# ---------------------------------------------------------------------------- without root


def test_targets_resolve_to_lab_hosts() -> None:
    topology = Topology(controllers=3, nodes=1)
    ctl3 = topology.host("ctl3")

    assert topology.resolve_target(ctl3.target) == ctl3
    assert (
        topology.resolve_target("sagemaker-cluster:other1234567_controller-machine-i-0000000000000c003")
        == ctl3
    )
    assert topology.resolve_target(ctl3.instance_id) == ctl3
    assert topology.resolve_target("ctl3") == ctl3
    assert topology.resolve_target(ctl3.target.replace("controller-machine", "worker-group-1")) is None
    assert topology.resolve_target("ctl4") is None
    assert topology.resolve_target("i-0000000000000c004") is None
    assert [h.address for h in topology.hosts] == ["10.214.0.11", "10.214.0.12", "10.214.0.13", "10.214.0.21"]


@pytest.mark.parametrize(
    ("controllers", "nodes", "network"),
    [(1, 2, "10.214.0.0/24"), (4, 2, "10.214.0.0/24"), (2, 0, "10.214.0.0/24"), (2, 2, "8.8.8.0/24")],
)
def test_topology_refuses_what_the_lab_cannot_build(controllers: int, nodes: int, network: str) -> None:
    with pytest.raises(LabConfigError):
        Topology(controllers=controllers, nodes=nodes, network=network)


@pytest.mark.parametrize(
    "password", ["short", "has space in it", "hash#inside", 'quote"inside', "back\\slash1"]
)
def test_passwords_slurmdbd_conf_cannot_carry_are_refused_without_echo(password: str) -> None:
    with pytest.raises(LabConfigError) as refused:
        check_db_password(password)

    assert password not in str(refused.value)


def test_slurm_conf_names_every_controller_in_order_and_a_local_slurmdbd() -> None:
    text = slurm_conf(Topology(controllers=3, nodes=2))

    assert [line for line in text.splitlines() if line.startswith("SlurmctldHost=")] == [
        "SlurmctldHost=ctl1(10.214.0.11)",
        "SlurmctldHost=ctl2(10.214.0.12)",
        "SlurmctldHost=ctl3(10.214.0.13)",
    ]
    assert "AccountingStorageHost=localhost\n" in text
    assert f"SlurmctldTimeout={SLURMCTLD_TIMEOUT_SECONDS}\n" in text


def test_command_lines_split_like_a_shell() -> None:
    request = _request("ctl1", "bash -c \"echo a | wc -c\" 'x  y'")

    assert command_line(request) == ["bash", "-c", "echo a | wc -c", "x  y"]
    with pytest.raises(LabRequestError):
        command_line(CommandRequest("ctl1", DOCUMENT, 5, {"command": ["a", "b"]}))


def test_heartbeat_reads_time_and_writer_index() -> None:
    beat = Heartbeat.parse(bytes.fromhex("000000006b0cb57c0000000000000001"), 1.5)

    assert (beat.beat_time, beat.writer_index, beat.mtime) == (1795995004, 1, 1.5)
    with pytest.raises(LabError):
        Heartbeat.parse(b"\0" * 15, 0.0)


# ---------------------------------------------------------------------------- helpers


def _show_cluster(lab: Lab, host: str) -> subprocess.CompletedProcess[str]:
    return lab.exec(
        host, ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster,controlhost,controlport"]
    )


def _netns() -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    return [line.split()[0] for line in listed.splitlines() if line.strip()]


def _lab_databases() -> list[str]:
    connection = AdminConnection().connect()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW DATABASES LIKE %s", (DB_NAME,))
            found = [row[0] for row in cursor.fetchall()]
            cursor.execute("SELECT user FROM mysql.user WHERE user LIKE %s", (f"{PREFIX}%",))
            return found + [row[0] for row in cursor.fetchall()]
    finally:
        connection.close()


def _stat(pid: int) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rfind(")") + 2 :].split()[0]


def _running(pid: int | None) -> bool:
    return pid is not None and _stat(pid) not in (None, "Z", "X")


def _processes() -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _running(int(entry.name)):
            found.append((int(entry.name), command_name(int(entry.name)) or ""))
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
