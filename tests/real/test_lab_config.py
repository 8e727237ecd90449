"""The lab's configuration without root: targets, topologies it refuses, passwords, slurm.conf,
command lines and the heartbeat file (in the lab tests' marker, like the rest of the lab)."""

from __future__ import annotations

import pytest

from hyperpod_ha.commands import CommandRequest
from hyperpod_lab import Heartbeat, LabConfigError, LabError, Topology
from hyperpod_lab.config import check_db_password, slurm_conf
from hyperpod_lab.runner import LabRequestError, command_line
from hyperpod_lab.topology import SLURMCTLD_TIMEOUT_SECONDS
from tests.real.lab_support import DOCUMENT, command_request

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def test_targets_resolve_to_lab_hosts() -> None:
    topology = Topology(controllers=3, nodes=1, slot=0)
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
    text = slurm_conf(Topology(controllers=3, nodes=2, slot=0))

    assert [line for line in text.splitlines() if line.startswith("SlurmctldHost=")] == [
        "SlurmctldHost=ctl1(10.214.0.11)",
        "SlurmctldHost=ctl2(10.214.0.12)",
        "SlurmctldHost=ctl3(10.214.0.13)",
    ]
    assert "AccountingStorageHost=localhost\n" in text
    assert f"SlurmctldTimeout={SLURMCTLD_TIMEOUT_SECONDS}\n" in text


def test_command_lines_split_like_a_shell() -> None:
    request = command_request("ctl1", "bash -c \"echo a | wc -c\" 'x  y'")

    assert command_line(request) == ["bash", "-c", "echo a | wc -c", "x  y"]
    with pytest.raises(LabRequestError):
        command_line(CommandRequest("ctl1", DOCUMENT, 5, {"command": ["a", "b"]}))


def test_heartbeat_reads_time_and_writer_index() -> None:
    beat = Heartbeat.parse(bytes.fromhex("000000006b0cb57c0000000000000001"), 1.5)

    assert (beat.beat_time, beat.writer_index, beat.mtime) == (1795995004, 1, 1.5)
    with pytest.raises(LabError):
        Heartbeat.parse(b"\0" * 15, 0.0)
