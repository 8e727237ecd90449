"""Controllers' reports built the way the health check builds them, for the verdict's tests.

Probe sections made of captured Slurm output (``hyperpod_ha_dev/captures``), run through
``report_from_result``; a controller SSM cannot reach, through ``check_controller``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from hyperpod_ha.commands import CommandResult
from hyperpod_ha.controllers.check import check_controller, report_from_result
from hyperpod_ha.controllers.models import Controller, ControllerReport
from hyperpod_ha.slurm import ProbeSection, parse_show_config
from hyperpod_ha.verdict import Verdict, VerdictName, VerdictPolicy, evaluate
from hyperpod_ha.verdict.reasons import ReasonCode
from hyperpod_ha_dev import CAPTURES
from tests.fakes.probe_output import format_probe_output
from tests.fakes.unreachable_runner import UnreachableRunner

STATE = "/srv/hplab/shared/state"
LOG = "/var/log/slurm/slurmctld.log"
ADDRESSES = {"ctl1": "10.214.0.11", "ctl2": "10.214.0.12", "ctl3": "10.214.0.13"}


def capture(name: str) -> str:
    return (CAPTURES / name).read_text().rstrip("\n")


def node(name: str, status: str = "Running") -> Controller:
    instance_id = f"i-0{name}{'0' * (16 - len(name))}"
    return Controller(
        instance_id=instance_id,
        group="controller-machine",
        status=status,
        private_ip=ADDRESSES[name],
        hostname=f"ip-{ADDRESSES[name].replace('.', '-')}",
        target=f"sagemaker-cluster:hplab0000001_controller-machine-{instance_id}",
    )


def two_controllers() -> str:
    return capture("show_config_lab.txt") + "\n" + capture("show_config_accounting_lab.txt")


def three_controllers() -> str:
    return (
        "SlurmctldHost[0]        = ctl1(10.214.0.11)\n"
        "SlurmctldHost[1]        = ctl2(10.214.0.12)\n"
        "SlurmctldHost[2]        = ctl3(10.214.0.13)\n"
        "SlurmctldTimeout        = 10 sec\n"
        f"StateSaveLocation       = {STATE}\n"
        "ClusterName             = lab"
    )


def ping_of_three(*up: bool) -> str:
    # scontrol's own format for three controllers: primary, backup1, backup2
    labels = ("primary", "backup1", "backup2")
    lines = [f"Slurmctld({labels[i]}) at ctl{i + 1} is {'UP' if u else 'DOWN'}" for i, u in enumerate(up)]
    if not all(up):
        lines += ["*" * 41, "** RESTORE SLURMCTLD DAEMON TO SERVICE **", "*" * 41]
    return "\n".join(lines)


def heartbeat_bytes(writer: int) -> tuple[int, str]:
    """The captured heartbeat of that writer (02: writer 0, 04b: writer 1); others built alike."""
    fixture = CAPTURES / f"heartbeat_writer{writer}.bin"
    data = (
        fixture.read_bytes()
        if fixture.exists()
        else (1795995100).to_bytes(8, "big") + writer.to_bytes(8, "big")
    )
    return int.from_bytes(data[:8], "big"), " ".join(str(b) for b in data)


def s(name: str, text: str, rc: int = 0, timed_out: bool = False) -> ProbeSection:
    return ProbeSection(name=name, text=text, exit_code=rc, millis=10, timed_out=timed_out, truncated=False)


CONF = "/opt/slurm/etc/slurm.conf"
SHARED_CONF = "/fsx/hyperpod/lab/opt/slurm/etc/slurm.conf"
PROGRAMS = {
    "On": "/fsx/hyperpod/lab/headnode_notification_on.sh",
    "Off": "/fsx/hyperpod/lab/headnode_notification_off.sh",
}


@dataclass(frozen=True)
class Conf:
    """What the probe's ``slurm_conf`` and ``failover_conf`` sections say; the defaults are
    HyperPod's: slurm.conf a link to the shared copy on the file system of StateSaveLocation,
    both ON/OFF programs set and executable. Values follow the running configuration's."""

    link: bool = True
    sha256: str = "5" * 64
    version: str | None = "24.11.5"
    hosts: tuple[str, ...] | None = None  # SlurmctldHost values; None: the running configuration's
    timeout: int = 10
    state: str = STATE
    programs: bool = True  # set in this node's slurm.conf
    running_programs: bool = True  # set in the running configuration
    program_state: str = "executable"
    fstype: str = "lustre"  # of the file slurm.conf resolves to
    source: str = "fsx"
    resolved: str | None = None  # where it resolves; None: the shared copy if a link, else itself

    def slurm_conf(self, config: str) -> str:
        hosts = self.hosts
        if hosts is None:
            hosts = tuple(f"{h.name}({h.address})" for h in parse_show_config(config).controllers)
        lines = [f"path={CONF}", "ClusterName=lab", *(f"SlurmctldHost={h}" for h in hosts)]
        lines += [f"SlurmctldTimeout={self.timeout}", f"StateSaveLocation={self.state}"]
        if self.programs:
            lines += [f"SlurmctldPrimary{slot}Prog={path}" for slot, path in PROGRAMS.items()]
        return "\n".join(lines)

    def running(self) -> str:
        value = (lambda slot: PROGRAMS[slot]) if self.running_programs else (lambda slot: "(null)")
        return "".join(f"\nSlurmctldPrimary{slot}Prog  = {value(slot)}" for slot in PROGRAMS)

    def failover_conf(self) -> str:
        lines = [f"version={self.version}" if self.version else "version_error=slurmctld not found"]
        for kind, configured in (("running", self.running_programs), ("file", self.programs)):
            for slot, path in PROGRAMS.items():
                lines.append(f"{kind}_{slot.lower()}_prog={path if configured else ''}")
                if configured:
                    lines.append(f"{kind}_{slot.lower()}_prog_state={self.program_state}")
        resolved = self.resolved or (SHARED_CONF if self.link else CONF)
        lines += [
            f"conf_path={CONF}",
            f"conf_link={'yes' if self.link else 'no'}",
            f"conf_resolved={resolved}",
        ]
        lines += ["conf_mount_target=/fsx", f"conf_fstype={self.fstype}", f"conf_source={self.source}"]
        return "\n".join([*lines, f"conf_hash={self.sha256}"])


@dataclass
class Probe:
    """What one controller's probe saw; the defaults are a healthy primary (captures 01 and 03)."""

    name: str = "ctl1"
    slurmctld: str | None = "S"  # /proc state of slurmctld, None: not running
    log: str | None = "slurmctld_log_ctl1_primary.txt"  # fixture name or text; None: no role line
    ping: str | None = "ping_all_up.txt"  # fixture name or text; None: timed out
    ping_rc: int = 0
    heartbeat: tuple[int, int] | str = (0, 1)  # (writer, age) or "missing" / "timeout"
    dbd: str = "sacctmgr_cluster_ctl1.txt"
    dbd_rc: int = 0
    sdiag: str = "sdiag_dbd_queue_empty.txt"
    sinfo: str = "sinfo_idle.txt"
    sinfo_rc: int = 0
    writable: bool | None = True  # None: the check timed out
    fstype: str = "lustre"
    state_source: str = "fsx"  # the device of StateSaveLocation's file system
    config: str = field(default_factory=two_controllers)
    now_local: str = "2026-11-29T23:40:00"  # the node's clock when the probe read the log
    conf: Conf | None = field(default_factory=Conf)  # None: no slurm.conf found, no failover_conf
    # slurmctld's own /readyz (25.11+): its status, "closed" (built without an HTTP parser),
    # "24.11" (not served); None: no slurmctld_http section (a probe before it)
    readyz: int | str | None = None
    # HyperPod's hand (hyperpod_hand): /opt/slurm's target and the nodes with an Action: reason
    slurm_link: str | None = None
    node_actions: tuple[str, ...] = ()
    # conf_change: each file's age in seconds (slurm.conf, topology.conf, ...), and a kill by a signal
    conf_ages: tuple[tuple[str, int], ...] = ()
    signal_exit: tuple[str, int] | None = None  # (status, age)
    # slurm_triggers: the section's text and exit code (strigger's); None: no such section
    triggers: tuple[str, int] | None = None

    def text_of(self, value: str) -> str:
        return capture(value) if value.endswith(".txt") else value

    def sections(self) -> list[ProbeSection]:
        services = "systemctl slurmctld " + ("active" if self.slurmctld else "inactive")
        if self.slurmctld:
            services += f"\nprocess slurmctld pid=7841 state={self.slurmctld} ppid=1 threads=17 same_ns=yes"
        role = f"now_local={self.now_local}\nsource=file:{LOG}"
        if self.log:
            role += "\n" + self.text_of(self.log)
        return [
            s("identity", f"hostname={self.name}\naddress={ADDRESSES[self.name]}\nnow=1795995200"),
            s("services", services + "\nsystemctl slurmdbd inactive"),
            s("slurm_conf", "path=", 1)
            if self.conf is None
            else s("slurm_conf", self.conf.slurm_conf(self.config)),
            s(
                "config",
                self.config
                + f"\nSlurmctldLogFile        = {LOG}"
                + (self.conf.running() if self.conf else ""),
            ),
            s("ping", "", 124, True)
            if self.ping is None
            else s("ping", self.text_of(self.ping), self.ping_rc),
            s("sinfo", capture(self.sinfo), self.sinfo_rc),
            s("sdiag", capture(self.sdiag)),
            s("dbd_clusters", self.text_of(self.dbd), self.dbd_rc),
            s("dbd_ping", capture("sacctmgr_ping_invalid_keyword.txt"), 1),
            s("role", role, 0 if self.log else 1),
            self.heartbeat_section(),
            self.state_save_section(),
            *([s("failover_conf", self.conf.failover_conf())] if self.conf else []),
            *([] if self.readyz is None else [s("slurmctld_http", self.http_section())]),
            *([s("hyperpod_hand", self.hand_section())] if self.slurm_link or self.node_actions else []),
            *([s("conf_change", self.conf_change_section())] if self.conf_ages or self.signal_exit else []),
            *([s("slurm_triggers", *self.triggers)] if self.triggers else []),
        ]

    def conf_change_section(self) -> str:
        now = 1795995200
        lines = [f"now={now}"]
        lines += [f"file {name} mtime={now - age} size=10 sha256={'a' * 64}" for name, age in self.conf_ages]
        if self.signal_exit:
            status, age = self.signal_exit
            lines.append(
                f"signal_exit={now - age}.5 {self.name} systemd[1]: slurmctld.service: Main process exited, "
                f"code=dumped, status={status}"
            )
        return "\n".join(lines)

    def hand_section(self) -> str:
        lines = [f"slurm_link={self.slurm_link}" if self.slurm_link else "slurm_link_error=no /opt/slurm"]
        lines += [
            f"action {node}|{action} by hyperpod"
            for node, _, action in (a.partition(" ") for a in self.node_actions)
        ]
        return "\n".join(lines)

    def http_section(self) -> str:
        if self.readyz == "24.11":
            return (
                "port=6817\nversion=24.11.5\nserved=no\nwhy=Slurm 24.11.5 serves no /readyz (added in 25.11)"
            )
        head = "port=6817\nversion=25.11.7\n"
        if self.readyz == "closed":
            closed = "connection closed without an HTTP answer (built without an HTTP parser?)"
            return head + f"readyz_error={closed}\nlivez_error={closed}"
        if self.readyz == "refused":
            return (
                head
                + "readyz_error=connection refused on port 6817\nlivez_error=connection refused on port 6817"
            )
        return head + f"readyz={self.readyz}\nlivez=204"

    def heartbeat_section(self) -> ProbeSection:
        if self.heartbeat == "timeout":
            return s("heartbeat", "", 124, True)
        if self.heartbeat == "missing":
            return s("heartbeat", f"path={STATE}/heartbeat\nexists=no\nnow=1795995200", 1)
        assert isinstance(self.heartbeat, tuple)
        writer, age = self.heartbeat
        beat, data = heartbeat_bytes(writer)
        text = f"path={STATE}/heartbeat\nexists=yes\nsize=16\nmtime={beat}\nnow={beat + age}\nbytes={data}"
        return s("heartbeat", text)

    def state_save_section(self) -> ProbeSection:
        if self.writable is None:
            return s("state_save", f"path={STATE}\nexists=yes\nerror=timed out creating a file", 124)
        text = f"path={STATE}\nexists=yes\nowner=slurm\nmount_target=/srv\nfstype={self.fstype}"
        text += f"\nsource={self.state_source}"
        text += "\nwritable=yes" if self.writable else "\nwritable=no\nwrite_error=Read-only file system"
        return s("state_save", text)

    def report(self) -> ControllerReport:
        output = format_probe_output(self.sections())
        return report_from_result(node(self.name), CommandResult(output, "", 0, 1.5, "test"))


@dataclass
class Unreachable:
    """A controller SSM cannot reach."""

    name: str

    def report(self) -> ControllerReport:
        return check_controller(
            node(self.name), UnreachableRunner(), document="ProbeDocument", deadline_seconds=60
        )


def verdict_of(*controllers: Probe | Unreachable, policy: VerdictPolicy | None = None) -> Verdict:
    verdict = evaluate([c.report() for c in controllers], policy)
    # the verdict always survives its own JSON
    assert json.loads(json.dumps(verdict.to_json()))["verdict"] == verdict.name.value
    return verdict


# Standby ctl2 in the all-up cluster of 01/03: its log says background mode; ping says UP.
STANDBY = Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt")
# ctl1 after SIGKILL (04): no process; ping sees it DOWN; the heartbeat is ctl2's.
CTL1_KILLED = Probe(
    name="ctl1",
    slurmctld=None,
    ping="ping_primary_down.txt",
    heartbeat=(1, 1),
    dbd="sacctmgr_cluster_ctl2.txt",
)
# ctl2 after its takeover (04): its log ends "Running as primary controller".
CTL2_TOOK_OVER = Probe(
    name="ctl2",
    log="slurmctld_log_ctl2_takeover.txt",
    ping="ping_primary_down.txt",
    heartbeat=(1, 1),
    dbd="sacctmgr_cluster_ctl2.txt",
    sinfo="sinfo_mixed_idle.txt",
)


@dataclass(frozen=True)
class Case:
    id: str
    controllers: tuple[Probe | Unreachable, ...]
    verdict: VerdictName
    active: str | None
    # Each: some reason has the code, and its text says these words.
    reasons: tuple[tuple[ReasonCode, str], ...] = ()
    policy: VerdictPolicy | None = None


def three_all_up(*confs: Conf | None) -> tuple[Probe, Probe, Probe]:
    """Three controllers, ctl1 active, ctl2 and ctl3 standbys, every one answering; each with
    its ``Conf`` (the default's when not given)."""
    conf = [*confs, *([Conf()] * (3 - len(confs)))]
    ping = ping_of_three(True, True, True)
    standby = {"config": three_controllers(), "ping": ping, "log": "slurmctld_log_ctl2_standby.txt"}
    return (
        Probe(config=three_controllers(), ping=ping, conf=conf[0]),
        Probe(name="ctl2", conf=conf[1], **standby),  # type: ignore[arg-type]
        Probe(name="ctl3", conf=conf[2], **standby),  # type: ignore[arg-type]
    )
