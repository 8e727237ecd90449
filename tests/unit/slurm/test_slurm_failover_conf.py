"""The probe's failover_conf section: real 24.11 and 25.11 output from the lab, and odd or hostile text
(every field out of its form is unknown, never an error, in one linear pass)."""

from __future__ import annotations

import pytest

from hyperpod_ha.slurm import (
    PROGRAM_SLOTS,
    FailoverConf,
    PrimaryProgram,
    parse_failover_conf,
    parse_probe_output,
    parse_show_config,
    parse_slurm_conf,
)
from hyperpod_ha.slurm.probe_output import MAX_SECTION_CHARS
from tests.unit.slurm.cases.captures import capture

SHARED = "/srv/hplab/shared/etc/slurm.conf"
ON, OFF = "/srv/hplab/shared/bin/slurmctld_primary_on", "/srv/hplab/shared/bin/slurmctld_primary_off"


def section(probe_capture: str, name: str = "failover_conf") -> str:
    return parse_probe_output(capture(probe_capture)).sections[name].text


@pytest.mark.parametrize(("release", "version"), [("24_11", "24.11.5"), ("25_11", "25.11.7")])
def test_a_controller_reading_the_shared_copy(release: str, version: str) -> None:
    found = parse_failover_conf(section(f"probe_ctl1_{release}.txt"))

    assert found.version == version
    assert (found.conf_path, found.conf_link, found.conf_resolved) == ("/etc/slurm/slurm.conf", True, SHARED)
    assert (found.conf_fstype, found.conf_source) == ("ext4", "/dev/vda")
    assert len(found.conf_sha256 or "") == 64
    for slot in PROGRAM_SLOTS:
        program = found.program(slot)
        assert program.configured is True
        assert program.path == (ON if "_on_" in slot else OFF)
        assert program.state == "executable"


def test_a_local_copy_after_sed_i_on_the_link_24_11() -> None:
    shared = parse_failover_conf(section("probe_ctl1_conf_drift_ctl2_24_11.txt"))
    local = parse_failover_conf(section("probe_ctl2_conf_drift_24_11.txt"))

    assert (local.conf_link, local.conf_resolved) == (False, "/etc/slurm/slurm.conf")
    # /etc/slurm is the host's own directory bound there: the same device, another mount.
    assert local.conf_source == "/dev/vda[/srv/hplab/hosts/ctl2/etc]"
    assert local.conf_sha256 != shared.conf_sha256
    assert parse_slurm_conf(section("probe_ctl2_conf_drift_24_11.txt", "slurm_conf")).slurmctld_timeout == 20
    assert (
        parse_slurm_conf(section("probe_ctl1_conf_drift_ctl2_24_11.txt", "slurm_conf")).slurmctld_timeout
        == 10
    )


def test_programs_unset_in_the_running_configuration_24_11() -> None:
    active = parse_failover_conf(section("probe_ctl1_onprog_off_24_11.txt"))
    standby = parse_failover_conf(section("probe_ctl2_onprog_off_ctl1_24_11.txt"))

    assert {slot: active.program(slot).configured for slot in PROGRAM_SLOTS} == dict.fromkeys(
        PROGRAM_SLOTS, False
    )
    assert all(active.program(slot).state is None for slot in PROGRAM_SLOTS)
    # The standby sees the active's running configuration, and its own slurm.conf (the shared copy).
    assert standby.program("running_on_prog").configured is False
    assert standby.program("file_on_prog") == PrimaryProgram(True, ON, "executable")


def test_show_config_names_the_programs_24_11() -> None:
    assert "SlurmctldPrimaryOnProg  = /srv/hplab/shared/bin/slurmctld_primary_on" in capture(
        "show_config_programs_24_11.txt"
    )
    assert "SlurmctldPrimaryOnProg  = (null)" in capture("show_config_programs_unset_24_11.txt")
    # The keys the probe now keeps change nothing the configuration parser reads.
    config = parse_show_config(capture("show_config_programs_24_11.txt"))
    assert (config.version, config.slurmctld_timeout, [h.name for h in config.controllers]) == (
        "24.11.5",
        10,
        ["ctl1", "ctl2"],
    )


def test_unknown_when_the_node_could_not_tell() -> None:
    found = parse_failover_conf(
        "version_error=slurmctld: command not found (exit 127)\nconf_error=no readable slurm.conf found\n"
    )
    assert found.version is None
    assert found.version_error == "slurmctld: command not found (exit 127)"
    assert (found.conf_link, found.conf_sha256) == (None, None)
    # No program line: that configuration could not be read (unknown), not "not set".
    assert all(found.program(slot).configured is None for slot in PROGRAM_SLOTS)
    assert parse_failover_conf("") == FailoverConf()


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("conf_hash=" + "A" * 64, "conf_sha256", None),  # sha256sum prints lower case
        ("conf_hash=" + "a" * 63, "conf_sha256", None),
        ("conf_hash=" + "a" * 64 + " /etc/slurm/slurm.conf", "conf_sha256", None),
        ("version=slurm 24.11.5", "version", None),
        ("version=24.11.5 extra", "version", None),
        ("version=" + "9" * 50, "version", None),
        ("version=25.11.7-1", "version", "25.11.7-1"),
        ("conf_link=maybe", "conf_link", None),
        ("conf_resolved=/x\nconf_resolved=/y", "conf_resolved", "/y"),
    ],
)
def test_a_field_out_of_its_form_is_unknown(text: str, field: str, expected: object) -> None:
    assert getattr(parse_failover_conf(text), field) == expected


def test_a_program_state_out_of_its_form_is_unknown() -> None:
    found = parse_failover_conf(
        "file_on_prog=/x\nfile_on_prog_state=runnable\nfile_off_prog=\nfile_off_prog_state=missing"
    )
    assert found.program("file_on_prog") == PrimaryProgram(True, "/x", None)
    # A state beside an unset program says nothing.
    assert found.program("file_off_prog") == PrimaryProgram(False, None, None)


@pytest.mark.parametrize(
    "text",
    [
        "\n" * MAX_SECTION_CHARS,
        "conf_hash=" + "a" * MAX_SECTION_CHARS,
        "file_on_prog=" + "/x" * (MAX_SECTION_CHARS // 2),
        "version=1.1" + "." * MAX_SECTION_CHARS,
        "running_on_prog=/x\n" * (MAX_SECTION_CHARS // 19),
        "=" * MAX_SECTION_CHARS,
        "conf_path=" + " " * MAX_SECTION_CHARS + "x",
    ],
    ids=range(7),
)
def test_hostile_text_gives_a_bounded_value(text: str) -> None:
    found = parse_failover_conf(text)
    for value in (
        found.version,
        found.conf_path,
        found.conf_sha256,
        *(p.path for p in found.programs.values()),
    ):
        assert value is None or len(value) <= 240
