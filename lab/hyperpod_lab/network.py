"""The lab's network: one bridge (the login host) and one namespace per host.

Everything is named with the lab prefix, so teardown finds what an interrupted set-up
left behind by listing names, not only from the lab's state file.
"""

from __future__ import annotations

import ipaddress
import json

from hyperpod_lab.processes import LabError, run
from hyperpod_lab.topology import Host, Topology


def namespaces(topology: Topology) -> list[str]:
    """The lab's network namespaces that exist now (its slot's: ``<prefix>-``)."""
    listed = run(["ip", "-json", "netns", "list"]).stdout.strip()
    entries = json.loads(listed) if listed else []
    return sorted(entry["name"] for entry in entries if entry["name"].startswith(f"{topology.prefix}-"))


def links(topology: Topology) -> list[str]:
    """The lab's links in the machine's namespace (the bridge, bridge sides of veth pairs)."""
    entries = json.loads(run(["ip", "-json", "link", "show"]).stdout or "[]")
    return sorted(entry["ifname"] for entry in entries if entry["ifname"].startswith(f"{topology.prefix}-"))


def namespace_pids(netns: str) -> list[int]:
    done = run(["ip", "netns", "pids", netns], check=False)
    return [int(word) for word in done.stdout.split() if word.isdigit()]


def check_network_free(topology: Topology) -> None:
    """Refuse to build on a network some other interface of this machine already uses."""
    wanted = topology.ip_network
    for entry in json.loads(run(["ip", "-json", "addr", "show"]).stdout or "[]"):
        if entry["ifname"] == topology.bridge:
            continue
        for info in entry.get("addr_info", []):
            if info.get("family") != "inet":
                continue
            theirs = ipaddress.IPv4Network(f"{info['local']}/{info['prefixlen']}", strict=False)
            if theirs.overlaps(wanted):
                raise LabError(f"network {wanted} overlaps {theirs} on {entry['ifname']}; choose another")


def create(topology: Topology) -> None:
    check_network_free(topology)
    prefix = topology.ip_network.prefixlen
    run(["ip", "link", "add", topology.bridge, "type", "bridge"])
    run(["ip", "addr", "add", f"{topology.login_address}/{prefix}", "dev", topology.bridge])
    run(["ip", "link", "set", topology.bridge, "up"])
    for host in topology.hosts:
        add_host(host, prefix, topology.bridge)


def add_host(host: Host, prefix: int, bridge: str) -> None:
    run(["ip", "netns", "add", host.netns])
    run(["ip", "link", "add", host.veth, "type", "veth", "peer", "name", "eth0", "netns", host.netns])
    run(["ip", "link", "set", host.veth, "master", bridge, "up"])
    run(["ip", "-n", host.netns, "addr", "add", f"{host.address}/{prefix}", "dev", "eth0"])
    run(["ip", "-n", host.netns, "link", "set", "eth0", "up"])
    run(["ip", "-n", host.netns, "link", "set", "lo", "up"])


def destroy(topology: Topology) -> list[str]:
    """Delete every lab link and namespace; return what was removed. Safe to repeat."""
    removed = []
    # Links first: deleting a veth's bridge side takes its namespace side along at once,
    # while deleting a namespace frees its veth pairs only later, in the background.
    for link in sorted(links(topology), key=lambda name: name == topology.bridge):
        if run(["ip", "link", "delete", link], check=False).returncode == 0:
            removed.append(f"link {link}")
    for netns in namespaces(topology):
        if run(["ip", "netns", "delete", netns], check=False).returncode == 0:
            removed.append(f"netns {netns}")
    return removed


def set_connected(host: Host, connected: bool) -> None:
    """Cut or restore the host's link to the bridge; the host itself keeps running."""
    run(["ip", "link", "set", host.veth, "up" if connected else "down"])


def connected(host: Host) -> bool:
    done = run(["ip", "-json", "link", "show", host.veth], check=False)
    if done.returncode != 0:
        return False
    entries = json.loads(done.stdout or "[]")
    return bool(entries) and "UP" in entries[0].get("flags", [])
