"""The real Slurm HA lab: controllers in network namespaces, a shared state directory,
slurmdbd on the local MariaDB, compute nodes that run jobs, faults and a clean teardown.

Needs root, network namespaces and the MariaDB server at 127.0.0.1:3306; skipped with the
reason otherwise, except under CI=true where a missing prerequisite fails the run.
"""

from __future__ import annotations

import re
import secrets
import signal
import time

import pytest

from hyperpod_ha.commands import CommandRequest, CommandTimedOut, TargetUnreachable, runner_for
from hyperpod_lab import Lab
from hyperpod_lab.processes import pid_namespace
from hyperpod_lab.runner import LabRequestError, LabRunner
from hyperpod_lab.topology import CLUSTER_NAME
from tests.real.lab_support import (
    DOCUMENT,
    SLURM,
    cmdline,
    command_request,
    processes,
    show_cluster,
    wait_for,
)

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def test_up_builds_the_controller_group_and_reuses_the_slurm_build(lab: Lab, db_password: str) -> None:
    # The session's lab came up first (tests/real/conftest.py), building Slurm if it had to:
    # a second bring-up on this machine reuses that build. How long it takes: make bench.
    lab.down()
    report = lab.up(db_password, install_packages=False)

    assert not report.reused
    assert not report.built_slurm
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
    assert not report.built_slurm
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

    wait_for(accounted, timeout=15)


def test_runner_runs_scontrol_ping_on_each_controller(running: Lab) -> None:
    runner = LabRunner(running)
    expected = ["Slurmctld(primary) at ctl1 is UP", "Slurmctld(backup) at ctl2 is UP"]

    for controller in running.controllers():
        ping = runner.run(command_request(controller["target"], "scontrol ping"))
        name = runner.run(command_request(controller["target"], "hostname"))

        assert ping.stdout.splitlines() == expected
        assert ping.exit_code == 0
        assert ping.transport == "lab"
        assert ping.stderr == ""
        assert ping.duration_seconds > 0
        assert name.stdout == f"{controller['hostname']}\n"


def test_runner_is_the_lab_transport(running: Lab) -> None:
    runner = runner_for("lab")

    result = runner.run(command_request("ctl2", "hostname"))

    assert runner.transport == "lab"
    assert result.stdout == "ctl2\n"


def test_runner_splits_like_a_shell_but_runs_no_shell(running: Lab) -> None:
    result = LabRunner(running).run(command_request("ctl1", "echo 'a  b' ; $HOME \"c d\""))

    assert result.stdout == "a  b ; $HOME c d\n"


def test_runner_reports_exit_codes_and_stderr(running: Lab) -> None:
    runner = LabRunner(running)

    missing = runner.run(command_request("ctl1", "no-such-program --flag"))
    bad = runner.run(command_request("ctl1", "sacctmgr -n no-such-keyword"))
    ping = runner.run(command_request("ctl1", "sacctmgr -n ping"))

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
    # A duration nothing else on the machine sleeps for: only this command's process matches.
    # Without the deadline the sleep would end normally after 29.7 s, raising nothing.
    with pytest.raises(CommandTimedOut):
        LabRunner(running).run(command_request("ctl1", "sleep 29.731", deadline=0.5))

    # Only the lab host's own processes: other work on the machine may sleep too.
    host = pid_namespace(running.holder("ctl1"))
    assert not [
        pid
        for pid, name in processes()
        if name == "sleep" and "29.731" in cmdline(pid) and pid_namespace(pid) == host
    ]


def test_runner_rejects_unknown_targets_and_bad_requests(running: Lab) -> None:
    runner = LabRunner(running)
    ctl1 = running.controllers()[0]

    with pytest.raises(TargetUnreachable):
        runner.run(
            command_request("sagemaker-cluster:abc_controller-machine-i-0123456789abcdef0", "hostname")
        )
    with pytest.raises(TargetUnreachable):
        runner.run(
            command_request(ctl1["target"].replace("controller-machine", "worker-group-1"), "hostname")
        )
    with pytest.raises(LabRequestError):
        runner.run(CommandRequest("ctl1", DOCUMENT, 5, {}))
    with pytest.raises(LabRequestError):
        runner.run(command_request("ctl1", "echo 'unbalanced"))


def test_each_controller_has_its_own_slurmdbd(running: Lab, db_password: str) -> None:
    paths = running.paths
    confs = {name: paths.host_etc(name) / "slurmdbd.conf" for name in ("ctl1", "ctl2")}
    for name, conf in confs.items():
        assert conf.stat().st_mode & 0o777 == 0o600
        assert f"DbdHost={name}\n" in conf.read_text()
        assert f"StoragePass={db_password}\n" in conf.read_text()
        assert running.pid(name, "slurmdbd") is not None

    # Both slurmdbds read the one database: the same cluster row from each controller. With
    # AccountingStorageHost=localhost (as on HyperPod) the registered host is the loopback.
    assert (
        show_cluster(running, "ctl1").stdout
        == show_cluster(running, "ctl2").stdout
        == f"{CLUSTER_NAME}|127.0.0.1|6817\n"
    )

    running.stop_slurmdbd("ctl2")
    try:
        stopped = show_cluster(running, "ctl2")
        assert stopped.returncode == 1
        assert show_cluster(running, "ctl1").returncode == 0
    finally:
        running.start_slurmdbd("ctl2")
    assert show_cluster(running, "ctl2").returncode == 0


def test_slurmdbd_started_beside_a_dead_slurmctld_blanks_the_registration(running: Lab) -> None:
    # A starting slurmdbd asks the registered controller (localhost:6817 from its own host)
    # to register again and, when nobody answers there, blanks the row for every controller.
    # `scontrol reconfigure` registers the active controller again on 24.11, not on 22.05.
    running.kill_slurmctld("ctl2")
    running.stop_slurmdbd("ctl2")
    running.start_slurmdbd("ctl2")
    try:
        wait_for(lambda: show_cluster(running, "ctl1").stdout == f"{CLUSTER_NAME}||0\n", timeout=5)
        running.exec("ctl1", ["scontrol", "reconfigure"])
        time.sleep(1)
        mended = f"{CLUSTER_NAME}|127.0.0.1|6817\n" if SLURM != "22.05" else f"{CLUSTER_NAME}||0\n"
        assert show_cluster(running, "ctl1").stdout == mended
    finally:
        running.start_slurmctld("ctl2")
        # Only a (re)start of the active slurmctld registers it again.
        running.kill_slurmctld("ctl1", signal.SIGTERM)
        running.start_slurmctld("ctl1")
    wait_for(lambda: show_cluster(running, "ctl2").stdout == f"{CLUSTER_NAME}|127.0.0.1|6817\n", timeout=10)


def test_systemctl_stand_in_restarts_a_hosts_own_daemons(running: Lab) -> None:
    runner = LabRunner(running)
    before = running.pid("ctl2", "slurmdbd")

    active = runner.run(command_request("ctl1", "systemctl is-active slurmctld"))
    elsewhere = runner.run(command_request("node1", "systemctl is-active slurmdbd"))
    restart = runner.run(command_request("ctl2", "systemctl restart slurmdbd.service"))

    assert (active.exit_code, active.stdout) == (0, "active\n")
    assert (elsewhere.exit_code, elsewhere.stdout) == (3, "inactive\n")
    assert restart.exit_code == 0, restart.stderr
    wait_for(lambda: show_cluster(running, "ctl2").returncode == 0, timeout=10)
    after = running.pid("ctl2", "slurmdbd")
    assert after is not None
    assert after != before
    assert running.pid("ctl1", "slurmdbd") is not None


def test_the_controller_probe_sees_only_its_own_host(running: Lab) -> None:
    probe = pytest.importorskip("hyperpod_ha.probe")
    runner = LabRunner(running)

    for name in ("ctl1", "ctl2"):
        result = runner.run(command_request(name, probe.probe_command(), deadline=60))

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
