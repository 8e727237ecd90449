"""Several labs on one machine: each slot's names, addresses, files and database are its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from hyperpod_ha_dev.simulation.lab.lock import lock_path
from hyperpod_lab import network, teardown
from hyperpod_lab.topology import SLOT_ENV, LabConfigError, Topology


def names(topology: Topology) -> set[str]:
    return {
        topology.bridge,
        topology.db_name,
        topology.db_user,
        topology.network,
        str(topology.root),
        *(host.netns for host in topology.hosts),
        *(host.veth for host in topology.hosts),
        *(host.address for host in topology.hosts),
    }


def test_slot_zero_is_the_lab_of_the_old_names() -> None:
    topology = Topology(slot=0)

    assert (topology.prefix, topology.bridge, topology.network) == ("hplab", "hplab-br", "10.214.0.0/24")
    assert (topology.root, topology.db_name, topology.db_user) == (
        Path("/srv/hplab"),
        "hplab_acct_db",
        "hplab_slurm",
    )
    assert topology.host("ctl1").netns == "hplab-ctl1"
    assert lock_path(0).name == "hyperpod-lab.lock"


def test_every_slot_shares_no_name_address_file_or_database_with_another() -> None:
    slots = [Topology(controllers=3, nodes=2, slot=slot) for slot in range(16)]

    for index, topology in enumerate(slots):
        for other in slots[index + 1 :]:
            assert not names(topology) & names(other)
            assert not topology.ip_network.overlaps(other.ip_network)
    assert len({lock_path(slot) for slot in range(16)}) == 16
    # Linux names a link in at most 15 characters.
    assert max(len(host.veth) for topology in slots for host in topology.hosts) <= 15


def test_the_slot_comes_from_the_environment_and_is_kept_in_the_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(SLOT_ENV, "3")
    topology = Topology()

    assert (topology.slot, topology.root, topology.network) == (3, Path("/srv/hplab3"), "10.214.3.0/24")
    assert Topology.from_json(topology.to_json()) == topology
    assert Topology.from_json({**topology.to_json(), "slot": 0}).slot == 0
    legacy = {key: value for key, value in Topology(slot=0).to_json().items() if key != "slot"}
    assert Topology.from_json(legacy).slot == 0


@pytest.mark.parametrize("value", ["-1", "16", "two", "1e3"])
def test_a_bad_slot_is_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(SLOT_ENV, value)
    with pytest.raises(LabConfigError, match=SLOT_ENV):
        Topology()


def test_a_lab_counts_its_own_escaped_daemons_and_not_another_labs_dying_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seen in CI: slot 1's leftovers named slot 4's slurmd, killed while slot 4 tore down
    (its namespace already gone). Whose a daemon is comes from its environment."""
    processes = {
        101: ("slurmd", "PATH=/srv/hplab1/bin:/srv/hplab1/aws-cli:/opt/x/bin"),  # ours, escaped
        102: ("slurmd", "PATH=/srv/hplab4/bin:/opt/x/bin"),  # another lab's, dying
        103: ("slurmctld", "PATH=/srv/hplab10/bin"),  # slot 10: /srv/hplab1 is only its prefix
        104: ("slurmd", "PATH=/usr/bin"),  # a daemon naming no lab, outside every lab
        105: ("slurmd", "PATH=/usr/bin"),  # naming no lab, in another lab's namespace
        106: ("sleep", "PATH=/srv/hplab1/bin"),  # not a Slurm daemon, outside the lab
    }
    monkeypatch.setattr(teardown, "_all_lab_namespaces", lambda: ["hplab2-ctl1"])
    monkeypatch.setattr(network, "namespace_pids", lambda netns: [105])
    monkeypatch.setattr(teardown, "running_pids", lambda: list(processes))
    monkeypatch.setattr(teardown, "command_name", lambda pid: processes[pid][0])
    monkeypatch.setattr(teardown, "cmdline", lambda pid: processes[pid][0])
    monkeypatch.setattr(teardown, "_environ", lambda pid: processes[pid][1])
    monkeypatch.setattr(teardown, "_slurm_binary", lambda pid: True)

    assert teardown.lab_processes(Topology(slot=1)) == [(101, "slurmd"), (104, "slurmd")]
    assert teardown.lab_processes(Topology(slot=10)) == [(103, "slurmctld"), (104, "slurmd")]
