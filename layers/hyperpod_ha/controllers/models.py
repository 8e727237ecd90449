"""A controller, a cluster's controllers, and one controller's health report.

The report is evidence, not a verdict: what this node's slurmctld and slurmdbd do, which role
its log says it took, what it sees of the heartbeat, StateSaveLocation, slurmdbd and the other
controllers, and what its next failover needs (its slurm.conf, version, ON/OFF programs).
:mod:`hyperpod_ha.verdict` weighs the reports of all controllers together.

Reports travel through Step Functions as JSON of bounded size: every text field is cut to
``TEXT_LIMIT`` characters and every list to ``LIST_LIMIT`` items (:mod:`.decoding`), which
keeps one report under :data:`REPORT_JSON_LIMIT` bytes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from hyperpod_ha.controllers.decoding import decode
from hyperpod_ha.controllers.errors import ControllerInputError
from hyperpod_ha.controllers.maintenance import Maintenance
from hyperpod_ha.controllers.orchestration import SlurmOrchestration
from hyperpod_ha.slurm import TEXT_LIMIT, ControllerHost, NodeStateCount, PingLine

# The worst case, every text and list at its cap (a real report is about 3 KiB): the failover
# evidence (slurm.conf, the version, the ON/OFF programs) raised it from 24 KiB.
REPORT_JSON_LIMIT: Final = 32 * 1024
RUNNING: Final = "Running"  # SageMaker's InstanceStatus of a node that can be probed


@dataclass(frozen=True)
class Controller:
    """A controller (a node of the controller group) as discovery hands it to the workflow's Map."""

    instance_id: str
    group: str
    status: str
    private_ip: str | None
    hostname: str | None
    target: str  # the SSM target of the node

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: object) -> Controller:
        if not isinstance(data, Mapping):
            raise ControllerInputError("controller is not a JSON object")
        values: dict[str, str | None] = {}
        for name in ("instance_id", "group", "status", "target"):
            value = data.get(name)
            if not isinstance(value, str) or not value:
                raise ControllerInputError(f"controller field {name!r} is missing or not a string")
            values[name] = value[:TEXT_LIMIT]
        for name in ("private_ip", "hostname"):
            value = data.get(name)
            if value is not None and not isinstance(value, str):
                raise ControllerInputError(f"controller field {name!r} is not a string")
            values[name] = value[:TEXT_LIMIT] if value else None
        return cls(
            instance_id=str(values["instance_id"]),
            group=str(values["group"]),
            status=str(values["status"]),
            private_ip=values["private_ip"],
            hostname=values["hostname"],
            target=str(values["target"]),
        )


@dataclass(frozen=True)
class ClusterControllers:
    cluster: str
    cluster_arn: str
    cluster_id: str
    cluster_status: str
    controllers: tuple[Controller, ...]
    # DescribeCluster's Orchestrator.Slurm: config strategy, external accounting database.
    accounting: SlurmOrchestration = field(default_factory=SlurmOrchestration)
    # The cluster or a controller being updated (HyperPod's maintenance): the run waits it out.
    maintenance: Maintenance = field(default_factory=lambda: Maintenance(""))

    def to_json(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "cluster_arn": self.cluster_arn,
            "cluster_id": self.cluster_id,
            "cluster_status": self.cluster_status,
            "controllers": [controller.to_json() for controller in self.controllers],
            "accounting": self.accounting.to_json(),
            "maintenance": self.maintenance.to_json(),
        }


class ReportStatus(StrEnum):
    CHECKED = "CHECKED"  # the probe ran to its end; the evidence below is this node's
    UNREACHABLE = "UNREACHABLE"  # SSM could not run the probe (reason says why)
    NOT_RUNNING = "NOT_RUNNING"  # the node's status is not Running: not probed
    PROBE_FAILED = "PROBE_FAILED"  # the probe ran but its output is missing or cut off


# --- evidence ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeEvidence:
    hostname: str | None = None
    addresses: tuple[str, ...] = ()
    controller_index: int | None = None  # this node's SlurmctldHost position (0 = configured primary)
    controller_name: str | None = None


@dataclass(frozen=True)
class ConfigEvidence:
    source: str | None = None  # "scontrol" (preferred) or "slurm.conf" (when slurmctld did not answer)
    cluster_name: str | None = None
    controllers: tuple[ControllerHost, ...] = ()
    slurmctld_timeout: int | None = None
    state_save_location: str | None = None
    log_file: str | None = None
    version: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class PingEvidence:
    lines: tuple[PingLine, ...] = ()  # this node's view of every controller
    exit_code: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class DaemonEvidence:
    running: bool | None = None  # None: not known
    stopped: bool = False  # a process is there but stopped (SIGSTOP): it answers nothing
    process_state: str | None = None
    pids: tuple[int, ...] = ()
    threads: int | None = None
    systemctl: str | None = None


@dataclass(frozen=True)
class RoleEvidence:
    logged: str | None = None  # last role line: primary, standby, taking_over, stopping, starting
    line: str | None = None
    line_age_seconds: int | None = None
    source: str | None = None
    error: str | None = None
    # Slurm 24.11: the standby's last reason for not taking over, logged after its last role
    # line ("heartbeat_unreadable", "heartbeat_updating", "undetermined", "waiting_for_heartbeat").
    refusal: str | None = None
    refusal_message: str | None = None
    refusal_age_seconds: int | None = None
    # The newest "fatal:" line logged after the last role line: why slurmctld exited (Slurm
    # 25.11's backup stops taking over on a missing state file: src/common/assoc_mgr.c).
    fatal_message: str | None = None
    fatal_age_seconds: int | None = None
    # How long ago it last logged a settled role (primary or standby): a configuration change
    # after it and a death after the change tie a crash loop to the change (verdict.crash_cause).
    settled_age_seconds: int | None = None


@dataclass(frozen=True)
class HeartbeatEvidence:
    readable: bool | None = None
    writer_index: int | None = None  # position of the controller that wrote the last beat
    beat_time: int | None = None
    age_seconds: int | None = None  # by this node's clock
    path: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class StateSaveEvidence:
    path: str | None = None
    exists: bool | None = None
    mount_target: str | None = None
    fstype: str | None = None
    source: str | None = None  # the file system's device (findmnt's SOURCE)
    writable: bool | None = None
    writable_by_slurm_user: bool | None = None
    write_error: str | None = None  # why a file could not be created there
    error: str | None = None

    @property
    def effectively_writable(self) -> bool | None:
        # slurmctld writes as SlurmUser; root's result stands in when that could not be tried.
        if self.writable_by_slurm_user is not None:
            return self.writable_by_slurm_user
        return self.writable


@dataclass(frozen=True)
class ProgramEvidence:
    """SlurmctldPrimaryOnProg or SlurmctldPrimaryOffProg as one configuration names it."""

    configured: bool | None = None  # None: that configuration could not be read
    path: str | None = None
    state: str | None = None  # executable, not_executable, missing; None: not set or not checked


@dataclass(frozen=True)
class FailoverConfigEvidence:
    """What the next failover needs from this controller: where its own slurm.conf resolves, a
    hash of it and the values a takeover depends on, its slurmctld's version, and the programs
    that publish the failover topic's messages (this node's slurm.conf, and the running
    configuration, which ``scontrol show config`` gets from the active controller)."""

    version: str | None = None  # `slurmctld -V` on this node
    conf_path: str | None = None  # where slurm.conf was found (/opt/slurm/etc/slurm.conf)
    conf_link: bool | None = None  # a symbolic link (HyperPod's to the shared copy) or a file
    conf_resolved: str | None = None  # the file it resolves to
    conf_fstype: str | None = None
    conf_source: str | None = None  # the device of the file system holding it
    conf_sha256: str | None = None
    controllers: tuple[ControllerHost, ...] = ()  # the SlurmctldHost lines of this node's slurm.conf
    slurmctld_timeout: int | None = None  # this node's slurm.conf
    state_save_location: str | None = None  # this node's slurm.conf
    on_prog: ProgramEvidence = field(default_factory=ProgramEvidence)  # this node's slurm.conf
    off_prog: ProgramEvidence = field(default_factory=ProgramEvidence)
    running_on_prog: ProgramEvidence = field(default_factory=ProgramEvidence)
    running_off_prog: ProgramEvidence = field(default_factory=ProgramEvidence)
    error: str | None = None


@dataclass(frozen=True)
class SlurmctldHttpEvidence:
    """Slurm's own answer on this node (25.11+): slurmctld's ``/readyz`` is 204 only on the
    controller in control, 500 on a standby or one reconfiguring; ``/livez`` 204 while it runs."""

    served: bool | None = None  # False: this release or configuration serves none; None: unknown
    readyz: int | None = None  # the HTTP status; None: no answer (``why`` says why)
    livez: int | None = None
    why: str | None = None  # why no /readyz status: not served, refused, closed unanswered, silent


@dataclass(frozen=True)
class ConfFileEvidence:
    name: str  # slurm.conf, topology.conf, topology.yaml
    exists: bool
    age_seconds: int | None = None  # since its last change, by this node's clock
    sha256: str | None = None


@dataclass(frozen=True)
class ConfChangeEvidence:
    """When this node's configuration files last changed, and slurmctld's last death by a
    signal (systemd's journal): what ties a crash loop to the change that caused it."""

    files: tuple[ConfFileEvidence, ...] = ()
    signal_status: str | None = None  # "11/SEGV"
    signal_age_seconds: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class NotifyFailuresEvidence:
    """The ON/OFF program's failed publishes (notification_attempts.log on the shared file system):
    a failover whose message failed is silent on the topic."""

    path: str | None = None
    failures: int | None = None  # None: not known (no file is not a failure: 0)
    last_failure: str | None = None
    age_seconds: int | None = None  # since the last one was appended
    error: str | None = None


@dataclass(frozen=True)
class HyperpodHandEvidence:
    """HyperPod's hand: the installation /opt/slurm links to, and the Slurm nodes HyperPod is
    replacing or rebooting (``<node>: Action:Replace``), as this controller sees them."""

    slurm_link: str | None = None
    node_actions: tuple[str, ...] = ()
    error: str | None = None  # why the node actions are not known


@dataclass(frozen=True)
class SlurmTriggersEvidence:
    """The Slurm triggers the stack installs (:mod:`hyperpod_ha.slurm.strigger_get`), as this node
    sees them: ``strigger --get`` (the active slurmctld's triggers, the same from every controller)
    and this node's copy of their program (slurmctld runs it where it is in control)."""

    answered: bool | None = None  # strigger --get answered; None: not known (not asked, no strigger)
    missing_count: int | None = None  # the stack's events without a trigger of ours; None: not known
    missing: tuple[str, ...] = ()  # which (the first of them)
    program_state: str | None = None  # executable, not_executable, missing, unknown
    program_topic: str | None = None  # the topic this node's program publishes to
    error: str | None = None


@dataclass(frozen=True)
class DbdEvidence:
    reachable: bool | None = None
    registered_host: str | None = None  # ControlHost: the controller registered with slurmdbd
    registered_port: int | None = None
    ping_supported: bool | None = None
    agent_queue_size: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class SchedulerEvidence:
    answers: bool | None = None  # sinfo from this node reached an active controller
    node_states: tuple[NodeStateCount, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class RpcEvidence:
    """A row of sdiag's RPC statistics (a message type or a user) since the counters' reset."""

    name: str
    count: int
    total_us: int


@dataclass(frozen=True)
class LoadEvidence:
    """How loaded the controllers are, as this node sees it (:mod:`.load_evidence`): sdiag's
    figures of the active slurmctld (sdiag asks whichever controller serves), MaxDBDMsgs, and
    what this node timed (the RPC round trips of sdiag and ``scontrol ping``, a file created in
    StateSaveLocation)."""

    sampled_at: int | None = None  # sdiag's time (the active slurmctld's clock)
    since: int | None = None  # when sdiag's counters were last reset
    server_threads: int | None = None
    agent_queue: int | None = None
    agent_count: int | None = None
    agent_threads: int | None = None
    dbd_agent_queue: int | None = None
    max_dbd_msgs: int | None = None  # the running MaxDBDMsgs (Slurm's default when unset)
    main_cycle_last_us: int | None = None
    main_cycle_mean_us: int | None = None
    backfill_cycle_last_us: int | None = None
    backfill_cycle_mean_us: int | None = None
    rpc_types: tuple[RpcEvidence, ...] = ()  # by total time, highest first
    rpc_users: tuple[RpcEvidence, ...] = ()
    sdiag_ms: int | None = None  # the sdiag call from this node, start to end
    ping_ms: int | None = None  # `scontrol ping` of every controller from this node
    state_save_write_ms: int | None = None  # create and remove a file in StateSaveLocation
    error: str | None = None


@dataclass(frozen=True)
class ControllerReport:
    instance_id: str
    status: ReportStatus
    group: str | None = None
    node_status: str | None = None
    hostname: str | None = None
    private_ip: str | None = None
    target: str | None = None
    reason: str | None = None
    transport: str | None = None
    duration_seconds: float | None = None
    exit_code: int | None = None
    node: NodeEvidence = field(default_factory=NodeEvidence)
    config: ConfigEvidence = field(default_factory=ConfigEvidence)
    ping: PingEvidence = field(default_factory=PingEvidence)
    slurmctld: DaemonEvidence = field(default_factory=DaemonEvidence)
    slurmdbd: DaemonEvidence = field(default_factory=DaemonEvidence)
    role: RoleEvidence = field(default_factory=RoleEvidence)
    heartbeat: HeartbeatEvidence = field(default_factory=HeartbeatEvidence)
    state_save: StateSaveEvidence = field(default_factory=StateSaveEvidence)
    dbd: DbdEvidence = field(default_factory=DbdEvidence)
    scheduler: SchedulerEvidence = field(default_factory=SchedulerEvidence)
    failover: FailoverConfigEvidence = field(default_factory=FailoverConfigEvidence)
    load: LoadEvidence = field(default_factory=LoadEvidence)
    http: SlurmctldHttpEvidence = field(default_factory=SlurmctldHttpEvidence)
    hyperpod: HyperpodHandEvidence = field(default_factory=HyperpodHandEvidence)
    conf_change: ConfChangeEvidence = field(default_factory=ConfChangeEvidence)
    notify_failures: NotifyFailuresEvidence = field(default_factory=NotifyFailuresEvidence)
    slurm_triggers: SlurmTriggersEvidence = field(default_factory=SlurmTriggersEvidence)
    notes: tuple[str, ...] = ()

    @property
    def checked(self) -> bool:
        return self.status is ReportStatus.CHECKED

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["status"] = self.status.value
        return data

    @classmethod
    def from_json(cls, data: object) -> ControllerReport:
        """Read a report back (from the workflow's state): types checked, sizes capped."""
        return decode(cls, data, "report")
