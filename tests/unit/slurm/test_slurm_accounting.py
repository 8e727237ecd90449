"""slurmdbd as the controllers see it: ``sacctmgr show cluster``, ``sacctmgr ping``, ``sdiag``."""

from __future__ import annotations

import pytest

from hyperpod_ha.slurm import (
    SlurmOutputError,
    first_error,
    parse_agent_queue_size,
    parse_cluster_registrations,
    parse_dbd_ping,
)
from tests.unit.slurm.cases.captures import blocks, capture


def test_parse_cluster_registrations_of_every_capture() -> None:
    ((_, rc, text),) = blocks("sacctmgr_show_cluster_outputs.txt")
    assert rc == 0
    (row,) = parse_cluster_registrations(text)
    assert (row.cluster, row.control_host, row.control_port) == ("lab", "10.214.0.11", 6817)
    (after,) = parse_cluster_registrations(capture("sacctmgr_cluster_ctl2.txt"))
    assert after.control_host == "10.214.0.12"


def test_no_registered_controller_reads_as_none() -> None:
    (row,) = parse_cluster_registrations(capture("sacctmgr_cluster_none.txt"))
    assert (row.control_host, row.control_port) == (None, None)


@pytest.mark.parametrize(
    "name", ["sacctmgr_cluster_refused.txt", "sacctmgr_cluster_db_access_denied.txt", "ping_all_up.txt"]
)
def test_parse_cluster_registrations_rejects_errors(name: str) -> None:
    with pytest.raises(SlurmOutputError):
        parse_cluster_registrations(capture(name))


def test_first_error_names_the_cause() -> None:
    assert (first_error(capture("sacctmgr_cluster_refused.txt")) or "").endswith("Connection refused")
    assert "Unable to connect to database" in (
        first_error(capture("sacctmgr_cluster_db_access_denied.txt")) or ""
    )
    assert first_error("") is None


@pytest.mark.parametrize(("where", "rc", "text"), blocks("sacctmgr_ping_outputs.txt"))
def test_sacctmgr_ping_does_not_exist_in_22_05(where: str, rc: int, text: str) -> None:
    assert rc == 1
    assert parse_dbd_ping(text).supported is False


def test_sacctmgr_ping_of_newer_slurm() -> None:
    ping = parse_dbd_ping(
        "slurmdbd(primary) at ip-10-1-0-11 is UP\nslurmdbd(backup) at ip-10-1-0-12 is DOWN\n"
    )
    assert ping.supported
    assert ping.responding == (("ip-10-1-0-11", True), ("ip-10-1-0-12", False))
    with pytest.raises(SlurmOutputError):
        parse_dbd_ping("sacctmgr: error: Failed to perform slurmdbd pings\n")


def test_parse_agent_queue_size() -> None:
    assert parse_agent_queue_size(capture("sdiag_dbd_queue_empty.txt")) == 0
    assert parse_agent_queue_size(capture("sdiag_dbd_queue_growing.txt")) == 3
    assert parse_agent_queue_size("Server thread count: 3\n") is None
