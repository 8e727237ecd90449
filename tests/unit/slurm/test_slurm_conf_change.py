"""The probe's conf_change section: the configuration files' times and hashes, a kill by a signal."""

from __future__ import annotations

from hyperpod_ha.slurm import ConfChange, ConfFile, parse_conf_change

SHA = "b" * 64


def test_the_files_and_the_signal() -> None:
    text = (
        "now=1795995200\n"
        f"file slurm.conf mtime=1795995000 size=1200 sha256={SHA}\n"
        "file topology.conf missing\n"
        f"file topology.yaml mtime=1795990000 size=0 sha256={SHA}\n"
        "file other.conf mtime=1 size=1 sha256=" + SHA + "\n"  # not one the probe reads
        "signal_exit=1795995100.123456 ctl1 systemd[1]: slurmctld.service: Main process exited, "
        "code=dumped, status=11/SEGV"
    )
    assert parse_conf_change(text) == ConfChange(
        now=1795995200,
        files=(
            ConfFile("slurm.conf", True, 1795995000, SHA),
            ConfFile("topology.conf", False),
            ConfFile("topology.yaml", True, 1795990000, SHA),
        ),
        signal_time=1795995100,
        signal_status="11/SEGV",
    )


def test_lines_out_of_their_form_are_skipped() -> None:
    found = parse_conf_change(
        "now=abc\nfile slurm.conf mtime=x\nsignal_exit=Main process exited\nerror=no slurm.conf"
    )
    assert found == ConfChange(error="no slurm.conf")
