"""The lab's slurm.conf as HyperPod lays it out, and the faults that make it drift, for real.

Every host reads ``/etc/slurm/slurm.conf``, a link to the shared copy, which names the lab's
SlurmctldPrimaryOnProg/OffProg; the programs run when slurmctld changes role. ``conf-drift`` and
``onprog-off`` run GNU ``sed -i`` on a controller's link (a local copy then) and make its
slurmctld read it again; ``conf-shared`` puts the link back. A fault in a state that does not
allow it is refused, through the command too: one line, exit 2, nothing changed.

Needs root, network namespaces and MariaDB; skipped otherwise, failed under CI=true.
"""

from __future__ import annotations

import os

import pytest

from hyperpod_ha_cli.main import main
from hyperpod_ha_dev.simulation.lab import baseline_problems, restore_lab
from hyperpod_lab import Lab
from hyperpod_lab.conf_drift import DRIFTED_SLURMCTLD_TIMEOUT, RECONFIGURED
from hyperpod_lab.faults import LabFaultError, check, inject
from hyperpod_lab.topology import SLURMCTLD_TIMEOUT_SECONDS
from tests.real.lab_support import wait_for

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def conf_of(lab: Lab, host: str) -> str:
    done = lab.exec(host, ["cat", "/etc/slurm/slurm.conf"])
    assert done.returncode == 0, done.stderr
    return done.stdout


def running_config(lab: Lab) -> str:
    """``scontrol show config`` from the login host: the active controller's running configuration."""
    return lab.client(["scontrol", "show", "config"], timeout=15).stdout


def test_the_programs_run_and_every_host_reads_the_shared_copy(running: Lab) -> None:
    assert running.local_conf_hosts() == []
    for host in running.topology.hosts:
        link = running.paths.host_etc(host.name) / "slurm.conf"
        assert os.readlink(link) == str(running.paths.slurm_conf)
    ctl1, ctl2 = (running.topology.host(name).address for name in ("ctl1", "ctl2"))
    messages = running.controller_status_messages()
    # HyperPod's messages: the primary's ON program, the standby's OFF program when it entered standby.
    assert any(m.endswith(f"Slurm Controller is ON, ({ctl1}, Primary Node)") for m in messages), messages
    assert any(m.endswith(f"Slurm Controller is OFF ({ctl2}, Backup Node)") for m in messages), messages
    config = running_config(running)
    for status in ("on", "off"):
        assert str(running.paths.primary_program(status)) in config


def test_conf_drift_leaves_a_local_copy_the_standby_reads(
    running: Lab, capfd: pytest.CaptureFixture[str]
) -> None:
    offset = len(running.log("ctl2"))
    shared_before = running.paths.slurm_conf.read_text()
    try:
        record = inject(running, "conf-drift", "ctl2")
        link = running.paths.host_etc("ctl2") / "slurm.conf"
        assert not link.is_symlink()  # sed -i replaced the link with a file
        assert f"SlurmctldTimeout={DRIFTED_SLURMCTLD_TIMEOUT}" in conf_of(running, "ctl2")
        assert running.paths.slurm_conf.read_text() == shared_before  # the shared copy untouched
        assert f"SlurmctldTimeout={SLURMCTLD_TIMEOUT_SECONDS}" in conf_of(running, "ctl1")
        assert RECONFIGURED in running.log("ctl2")[offset:]
        assert "read it again" in record["detail"]
        assert running.local_conf_hosts() == ["ctl2"]
        assert running.status()["local_slurm_conf_hosts"] == ["ctl2"]
        capfd.readouterr()
        assert main(["lab", "status", "--root", str(running.paths.root)]) == 0
        assert "slurm.conf a local copy (not the shared one) on ctl2" in capfd.readouterr().out
        assert baseline_problems(running) == ["ctl2's slurm.conf is a local copy"]
        with pytest.raises(LabFaultError, match="already a local copy"):
            check(running, "onprog-off", "ctl2")
    finally:
        inject(running, "conf-shared", "ctl2")
    assert running.local_conf_hosts() == []
    with pytest.raises(LabFaultError, match="already the link to the shared copy"):
        check(running, "conf-shared", "ctl2")


def test_onprog_off_on_the_active_controller_reaches_its_running_configuration(running: Lab) -> None:
    try:
        inject(running, "onprog-off", "ctl1")
        assert "SlurmctldPrimaryOnProg" not in conf_of(running, "ctl1")

        def unset() -> bool:
            return "SlurmctldPrimaryOnProg  = (null)" in running_config(running)

        wait_for(unset, timeout=30)
        assert "SlurmctldPrimaryOffProg = (null)" in running_config(running)
    finally:
        inject(running, "conf-shared", "ctl1")
    wait_for(lambda: str(running.paths.primary_program("on")) in running_config(running), timeout=30)
    assert baseline_problems(running) == []


def test_a_refused_conf_fault_exits_2_and_changes_nothing(
    running: Lab, capfd: pytest.CaptureFixture[str]
) -> None:
    link = running.paths.host_etc("ctl2") / "slurm.conf"
    before = link.lstat().st_mtime_ns
    errors = []
    for argv in (("conf-shared", "ctl2"), ("conf-drift", "node1")):
        code = main(["lab", "fault", *argv, "--root", str(running.paths.root)])
        err = capfd.readouterr().err.strip().splitlines()
        assert code == 2
        assert len(err) == 1, err
        errors += err
    assert errors == [
        "hyperpod-ha lab fault: conf-shared refused: "
        "ctl2's slurm.conf is already the link to the shared copy",
        "hyperpod-ha lab fault: conf-drift applies to controllers; node1 is a compute node",
    ]
    assert link.lstat().st_mtime_ns == before
    assert running.local_conf_hosts() == []


def test_the_baseline_repairs_a_local_copy(running: Lab) -> None:
    inject(running, "conf-drift", "ctl2")
    repairs = restore_lab(running)
    assert any("ctl2 the link to the shared copy again" in repair for repair in repairs), repairs
    assert running.local_conf_hosts() == []
