"""``scontrol show config`` and the probe's slurm.conf section."""

from __future__ import annotations

import pytest

from hyperpod_ha.slurm import (
    ControllerHost,
    SlurmOutputError,
    parse_show_config,
    parse_slurm_conf,
)
from tests.unit.slurm.cases.captures import capture


def test_parse_show_config_of_the_lab() -> None:
    config = parse_show_config(capture("show_config_lab.txt") + capture("show_config_accounting_lab.txt"))
    assert config.source == "scontrol"
    assert config.controllers == (
        ControllerHost(index=0, name="ctl1", address="10.214.0.11"),
        ControllerHost(index=1, name="ctl2", address="10.214.0.12"),
    )
    assert config.slurmctld_timeout == 10
    assert config.state_save_location == "/srv/hplab/shared/state"
    assert config.cluster_name == "lab"
    assert config.log_file is None


def test_parse_show_config_with_three_hosts_names_and_nulls() -> None:
    text = (
        "Configuration data as of 2026-11-29T23:30:00\n"
        "SlurmctldHost[0]        = ip-10-1-0-11\n"
        "SlurmctldHost[2]        = ip-10-1-0-13(10.1.0.13)\n"
        "SlurmctldHost[1]        = ip-10-1-0-12(10.1.0.12)\n"
        "SlurmctldLogFile        = (null)\n"
        "SlurmctldTimeout        = 300 sec\n"
        "SlurmUser               = slurm(401)\n"
        "SLURM_VERSION           = 24.05.4\n"
        "Slurmctld(primary) at ip-10-1-0-11 is UP\n"
    )
    config = parse_show_config(text)
    assert [(h.index, h.name, h.address) for h in config.controllers] == [
        (0, "ip-10-1-0-11", None),
        (1, "ip-10-1-0-12", "10.1.0.12"),
        (2, "ip-10-1-0-13", "10.1.0.13"),
    ]
    assert config.slurmctld_timeout == 300
    assert config.slurm_user == "slurm"
    assert config.version == "24.05.4"
    assert config.log_file is None


def test_parse_show_config_of_old_slurm_reads_control_machine() -> None:
    text = (
        "ControlMachine = head1\nControlAddr = 10.0.0.1\nBackupController = head2\nSlurmctldTimeout = 120\n"
    )
    config = parse_show_config(text)
    assert [(h.name, h.address) for h in config.controllers] == [("head1", "10.0.0.1"), ("head2", None)]


@pytest.mark.parametrize(
    "text",
    ["", capture("sinfo_connect_failure.txt"), "SlurmctldTimeout = soon\n", "SlurmctldHost[0] = a b\n"],
)
def test_parse_show_config_rejects(text: str) -> None:
    with pytest.raises(SlurmOutputError):
        parse_show_config(text)


def test_parse_slurm_conf_section() -> None:
    text = (
        "path=/opt/slurm/etc/slurm.conf\n"
        "SlurmctldHost=ip-10-1-0-11(10.1.0.11)\n"
        "SlurmctldHost=ip-10-1-0-12\n"
        "slurmctldtimeout=120 # seconds\n"
        "StateSaveLocation=/fsx/aws/hyperpod/c1/var/spool/slurmctld\n"
        "SlurmctldLogFile=/var/log/slurm/slurmctld.log\n"
    )
    config = parse_slurm_conf(text)
    assert config.source == "slurm.conf"
    assert [(h.index, h.name, h.address) for h in config.controllers] == [
        (0, "ip-10-1-0-11", "10.1.0.11"),
        (1, "ip-10-1-0-12", None),
    ]
    assert config.slurmctld_timeout == 120
    assert config.state_save_location == "/fsx/aws/hyperpod/c1/var/spool/slurmctld"
    assert config.log_file == "/var/log/slurm/slurmctld.log"


@pytest.mark.parametrize("text", ["", "path=\n", "SlurmctldHost=a\n", "path=/x\nnot a line\n"])
def test_parse_slurm_conf_rejects(text: str) -> None:
    with pytest.raises(SlurmOutputError):
        parse_slurm_conf(text)
