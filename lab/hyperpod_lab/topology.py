"""Names, addresses and paths of the lab: one place, so setup, teardown and the runner agree.

The lab stands in for a HyperPod cluster: controllers ``ctl1``.. (the controller group) and
compute nodes ``node1``.. (a worker group), each a network namespace with its own host name,
on one Linux bridge whose own address is the "login" host. Every name the lab creates on
the machine starts with ``hplab`` so teardown can find leftovers even without its state file.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

PREFIX = "hplab"
DEFAULT_ROOT = Path("/srv/hplab")
DEFAULT_NETWORK = "10.214.0.0/24"
# Several labs can run on one machine at once, each in its own slot: slot 0 is the lab of the
# names above; slot N's names carry N (``hplabN-ctl1``, ``/srv/hplabN``, ``10.214.N.0/24``,
# ``hplabN_acct_db``), so no name, address, file or database of one lab is another's. The
# lab tests run one lab per test worker; a process's default slot is this variable's.
SLOT_ENV = "HYPERPOD_LAB_SLOT"
MAX_SLOT = 15

CLUSTER_NAME = "lab"
# A HyperPod cluster id is the last segment of the cluster ARN; the lab's is fixed.
CLUSTER_ID = "hplab0000001"
CLUSTER_ARN = f"arn:aws:sagemaker:us-east-1:000000000000:cluster/{CLUSTER_ID}"
CONTROLLER_GROUP = "controller-machine"
WORKER_GROUP = "worker-group-1"

SLURMCTLD_TIMEOUT_SECONDS = 10

MAX_CONTROLLERS = 3
MAX_NODES = 2
# The Slurm release series the lab can run (hyperpod_lab.releases); HyperPod's AMIs ship 24.11
# and 25.11 (24.11 is the default: the captures and most runs are on it).
SLURM_SERIES = ("24.11", "25.11", "22.05")
DEFAULT_SLURM = "24.11"

_TARGET = re.compile(r"^sagemaker-cluster:(?P<cluster>[^_]+)_(?P<group>.+)-(?P<instance>i-[0-9a-f]{8,17})$")

Role = Literal["controller", "compute"]


class LabConfigError(ValueError):
    """A lab setting or name is not acceptable. ``reason`` is safe to log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Host:
    """One lab host: a network namespace, a host name and a stable fake EC2 instance."""

    name: str
    role: Role
    index: int  # 1-based within its role; ctl1 is the first SlurmctldHost (the primary)
    address: str
    prefix: str = PREFIX  # the lab's name prefix (its slot's)

    @property
    def group(self) -> str:
        return CONTROLLER_GROUP if self.role == "controller" else WORKER_GROUP

    @property
    def daemons(self) -> tuple[str, ...]:
        """What runs here (as systemd units on HyperPod): slurmdbd beside every slurmctld."""
        return ("slurmdbd", "slurmctld") if self.role == "controller" else ("slurmd",)

    @property
    def instance_id(self) -> str:
        # 17 hex digits like a real instance id, so id patterns elsewhere accept it:
        # i-0000000000000c001 is ctl1, i-0000000000000d001 is node1.
        kind = "c" if self.role == "controller" else "d"
        return f"i-0000000000000{kind}{self.index:03d}"

    @property
    def target(self) -> str:
        """The Session Manager target HyperPod would give this instance."""
        return f"sagemaker-cluster:{CLUSTER_ID}_{self.group}-{self.instance_id}"

    @property
    def netns(self) -> str:
        return f"{self.prefix}-{self.name}"

    @property
    def veth(self) -> str:
        """The bridge side of the host's link (the namespace side is ``eth0``)."""
        return f"{self.prefix}-{self.name}"


@dataclass(frozen=True)
class LabPaths:
    """Where the lab keeps its files. ``local`` is a per-host view: inside each host's
    mount namespace ``<root>/hosts/<name>`` is bound onto it, and ``<local>/etc`` onto
    ``/etc/slurm``, so one slurm.conf names the same paths for every host."""

    root: Path

    @property
    def shared(self) -> Path:
        """Stands in for FSx for Lustre: configuration and controller state."""
        return self.root / "shared"

    @property
    def shared_etc(self) -> Path:
        return self.shared / "etc"

    @property
    def slurm_conf(self) -> Path:
        return self.shared_etc / "slurm.conf"

    @property
    def cgroup_conf(self) -> Path:
        return self.shared_etc / "cgroup.conf"

    def primary_program(self, status: str) -> Path:
        """SlurmctldPrimaryOnProg (``on``) or SlurmctldPrimaryOffProg (``off``): on the shared file
        system, as HyperPod keeps its notification script on FSx."""
        return self.shared / "bin" / f"slurmctld_primary_{status}"

    @property
    def controller_status_log(self) -> Path:
        """What the ON/OFF programs wrote, one line each (HyperPod's controller_status.log)."""
        return self.shared / "log" / "controller_status.log"

    @property
    def state_dir(self) -> Path:
        """StateSaveLocation, shared by all controllers."""
        return self.shared / "state"

    @property
    def heartbeat(self) -> Path:
        return self.state_dir / "heartbeat"

    @property
    def local(self) -> Path:
        return self.root / "local"

    @property
    def hosts_file(self) -> Path:
        return self.root / "etc-hosts"

    @property
    def state_file(self) -> Path:
        return self.root / "lab.json"

    @property
    def bin_dir(self) -> Path:
        """Put first on the PATH of commands run on lab hosts (the systemctl stand-in)."""
        return self.root / "bin"

    @property
    def aws_cli_dir(self) -> Path:
        """Where an instance has its AWS CLI, which a lab host lacks: on the PATH of every command
        and daemon of the lab's hosts, after the systemctl stand-in, so a program slurmctld runs
        (a Slurm trigger's) finds ``aws`` as on an instance. The lab leaves it empty; the
        development tools put their stand-in there while they relay what it publishes."""
        return self.root / "aws-cli"

    @property
    def sns_outbox(self) -> Path:
        """What the hosts' ``aws sns publish`` sent (the lab has no SNS): one JSON line each."""
        return self.shared / "log" / "sns_outbox.log"

    def trigger_program_dir(self, host: str) -> Path:
        """Bound onto the host's ``/usr/local/libexec/hyperpod-ha``, where the Slurm triggers'
        install writes their program: each controller has its own, and it goes with the lab."""
        return self.host_dir(host) / "libexec-hyperpod-ha"

    def host_munge_run(self, host: str) -> Path:
        """Bound onto the host's /run/munge: each host has its own munged, as an instance does
        (one munged for every node would see a step's launch credential once per node, a replay)."""
        return self.host_dir(host) / "munge-run"

    def hidden_state_dir(self, host: str) -> Path:
        """An empty directory of the host's own, bound over StateSaveLocation there when it must
        not read the heartbeat (as a local directory where FSx failed to mount would be)."""
        return self.host_dir(host) / "state-not-mounted"

    def host_dir(self, host: str) -> Path:
        return self.root / "hosts" / host

    @property
    def node_secret_dir(self) -> Path:
        """Where the database secret sits while a node script reads it (root-only, emptied
        when the request ends, made anew by the next run if a killed one left it)."""
        return self.root / "node-secret"

    def host_etc(self, host: str) -> Path:
        """Becomes the host's /etc/slurm: links to the shared files plus local slurmdbd.conf."""
        return self.host_dir(host) / "etc"

    def log(self, host: str, daemon: str) -> Path:
        return self.host_dir(host) / "log" / f"{daemon}.log"

    def launch_log(self, host: str, what: str) -> Path:
        """stdout and stderr of a launched process (daemons log to their own files)."""
        return self.host_dir(host) / "log" / f"{what}.out"


def current_slot() -> int:
    """This process's lab slot: ``$HYPERPOD_LAB_SLOT``, else 0."""
    text = os.environ.get(SLOT_ENV, "").strip() or "0"
    if not text.isdigit() or not 0 <= int(text) <= MAX_SLOT:
        raise LabConfigError(f"{SLOT_ENV} must be a number 0..{MAX_SLOT}, got {text[:20]!r}")
    return int(text)


def slot_prefix(slot: int) -> str:
    return PREFIX if slot == 0 else f"{PREFIX}{slot}"


def slot_root(slot: int) -> Path:
    return DEFAULT_ROOT if slot == 0 else DEFAULT_ROOT.with_name(slot_prefix(slot))


def slot_network(slot: int) -> str:
    return DEFAULT_NETWORK if slot == 0 else f"10.214.{slot}.0/24"


@dataclass(frozen=True)
class Topology:
    """How many controllers and compute nodes, on which private network, under which root.

    ``slot``: which of the machine's labs this is (default: this process's,
    :func:`current_slot`); an empty ``network`` or ``root`` is the slot's own."""

    controllers: int = 2
    nodes: int = 2
    network: str = ""
    root: Path = Path()
    slurm: str = DEFAULT_SLURM
    slot: int = field(default_factory=current_slot)

    def __post_init__(self) -> None:
        if not 0 <= self.slot <= MAX_SLOT:
            raise LabConfigError(f"slot must be 0..{MAX_SLOT}, got {self.slot}")
        if not self.network:
            object.__setattr__(self, "network", slot_network(self.slot))
        if self.root == Path():
            object.__setattr__(self, "root", slot_root(self.slot))
        if self.slurm not in SLURM_SERIES:
            raise LabConfigError(f"slurm must be one of {', '.join(SLURM_SERIES)}, got {self.slurm[:20]!r}")
        if not 2 <= self.controllers <= MAX_CONTROLLERS:
            raise LabConfigError(f"controllers must be 2..{MAX_CONTROLLERS}, got {self.controllers}")
        if not 1 <= self.nodes <= MAX_NODES:
            raise LabConfigError(f"nodes must be 1..{MAX_NODES}, got {self.nodes}")
        try:
            net = ipaddress.IPv4Network(self.network)
        except ValueError:
            raise LabConfigError(f"network must be an IPv4 network like {DEFAULT_NETWORK}") from None
        if not net.is_private or net.prefixlen > 26:
            raise LabConfigError("network must be a private IPv4 network of at least 64 addresses")
        if not self.root.is_absolute() or self.root == Path("/"):
            raise LabConfigError("root must be an absolute directory other than /")

    @property
    def prefix(self) -> str:
        """What every name the lab gives on the machine starts with (namespaces, links)."""
        return slot_prefix(self.slot)

    @property
    def bridge(self) -> str:
        return f"{self.prefix}-br"

    @property
    def db_name(self) -> str:
        return f"{self.prefix}_acct_db"

    @property
    def db_user(self) -> str:
        return f"{self.prefix}_slurm"

    @property
    def ip_network(self) -> ipaddress.IPv4Network:
        return ipaddress.IPv4Network(self.network)

    @property
    def paths(self) -> LabPaths:
        return LabPaths(self.root)

    @property
    def login_address(self) -> str:
        """The bridge's own address: the login host where client commands run."""
        return str(self.ip_network[1])

    @property
    def controller_hosts(self) -> tuple[Host, ...]:
        net = self.ip_network
        return tuple(
            Host(f"ctl{i}", "controller", i, str(net[10 + i]), self.prefix)
            for i in range(1, self.controllers + 1)
        )

    @property
    def compute_hosts(self) -> tuple[Host, ...]:
        net = self.ip_network
        return tuple(
            Host(f"node{i}", "compute", i, str(net[20 + i]), self.prefix) for i in range(1, self.nodes + 1)
        )

    @property
    def hosts(self) -> tuple[Host, ...]:
        return self.controller_hosts + self.compute_hosts

    def host(self, name: str) -> Host:
        for host in self.hosts:
            if host.name == name:
                return host
        raise LabConfigError(f"no lab host named {name!r}")

    def controller(self, name: str) -> Host:
        host = self.host(name)
        if host.role != "controller":
            raise LabConfigError(f"lab host {name!r} is not a controller")
        return host

    def resolve_target(self, target: str) -> Host | None:
        """The host behind a lab host name, an instance id or a ``sagemaker-cluster:`` target."""
        match = _TARGET.match(target)
        instance_id = match.group("instance") if match else target
        for host in self.hosts:
            if target == host.name or instance_id == host.instance_id:
                if match and match.group("group") != host.group:
                    return None
                return host
        return None

    def to_json(self) -> dict[str, object]:
        return {
            "controllers": self.controllers,
            "nodes": self.nodes,
            "network": self.network,
            "root": str(self.root),
            "slurm": self.slurm,
            "slot": self.slot,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Topology:
        return cls(
            controllers=int(data["controllers"]),
            nodes=int(data["nodes"]),
            network=str(data["network"]),
            root=Path(str(data["root"])),
            # A state file from before the lab ran several releases is a 22.05 lab.
            slurm=str(data.get("slurm", "22.05")),
            # A state file from before labs had slots is slot 0's.
            slot=int(data.get("slot", 0)),
        )
