"""A verdict's reasons: each one a stable code (**contract**: tests, lab checks, filters and
dashboards match it, never the text) and the text on-call reads.

Every code has one row in :data:`REASONS`: its severity on OpsCenter's scale (``1`` critical ..
``4`` low) when it is a problem, ``None`` when it only explains (who is active, how a standby
is, what HyperPod said), and what it means. A DEGRADED verdict's headline (the incident's title
and the message's subject) is its most severe problem, the first of them on a tie: the order in
which the rules run decides nothing else. docs/reasons.md is written from this table by
``make generate``.

The early warnings' codes are not reasons (a warning never changes a verdict): they have their
own one table, ``hyperpod_ha.early_warning.rules.WARNINGS``, listed on the same page; no code is
in both."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Final


class ReasonCode(StrEnum):
    """Every reason a verdict gives, by name (the values are the contract)."""

    # Who is active (context).
    PRIMARY_ACTIVE = "primary-active"
    BACKUP_TOOK_OVER = "backup-took-over"
    ACTIVE_CONTROLLER = "active-controller"
    CONTROLLER_STATE = "controller-state"
    STANDBY_DOWN = "standby-down"
    STANDBY_UNCHECKED = "standby-unchecked"
    NOT_A_SLURMCTLD_HOST = "not-a-slurmctld-host"
    SLURMDBD_REGISTERED_HOST = "slurmdbd-registered-host"
    HYPERPOD_REPORTED = "hyperpod-reported"
    MAINTENANCE_IN_PROGRESS = "maintenance-in-progress"
    MAINTENANCE_ENDED = "maintenance-ended"
    MAINTENANCE_OVERDUE = "maintenance-overdue"
    # The cluster does not serve.
    NO_CONTROLLER_CHECKED = "no-controller-checked"
    NO_ACTIVE_CONTROLLER = "no-active-controller"
    SEVERAL_ACTIVE = "several-active"
    HEARTBEAT_SEVERAL_WRITERS = "heartbeat-several-writers"
    HEARTBEAT_HOLDER_UNREACHABLE = "heartbeat-holder-unreachable"
    # The active controller, or the next failover, is not right.
    ACTIVE_NOT_A_SLURMCTLD_HOST = "active-not-a-slurmctld-host"
    ACTIVE_NOT_CHECKED = "active-not-checked"
    TWO_NODES_ONE_CONTROLLER = "two-nodes-one-controller"
    TAKEOVER_REFUSED = "takeover-refused"
    TAKEOVER_WAITS_FOR_HEARTBEAT = "takeover-waits-for-heartbeat"
    SLURMCTLD_FATAL = "slurmctld-fatal"
    CONFIG_CHANGE_CRASH = "config-change-crash"
    SLURMCTLD_READINESS = "slurmctld-readiness"
    NOTIFICATIONS_FAILED = "notifications-failed"
    HEARTBEAT_HOLDER_HUNG = "heartbeat-holder-hung"
    HEARTBEAT_WRITER_NOT_ACTIVE = "heartbeat-writer-not-active"
    HEARTBEAT_NOT_WRITTEN = "heartbeat-not-written"
    HEARTBEAT_WRITTEN_BY_OTHER = "heartbeat-written-by-other"
    HEARTBEAT_UNREADABLE = "heartbeat-unreadable"
    STATE_SAVE_ERROR = "state-save-error"
    STATE_SAVE_MISSING = "state-save-missing"
    STATE_SAVE_NOT_WRITABLE = "state-save-not-writable"
    STATE_SAVE_FILESYSTEM = "state-save-filesystem"
    STATE_SAVE_FILESYSTEMS_DIFFER = "state-save-filesystems-differ"
    SINFO_FAILS = "sinfo-fails"
    NO_COMPUTE_NODE_RESPONDS = "no-compute-node-responds"
    STANDBY_IN_FLUX = "standby-in-flux"
    STANDBY_CANNOT_REACH_ACTIVE = "standby-cannot-reach-active"
    STANDBY_NOT_ANSWERING_PING = "standby-not-answering-ping"
    NO_READY_STANDBY = "no-ready-standby"
    SLURM_CONF_LOCAL_COPY = "slurm-conf-local-copy"
    SLURM_CONF_DIFFERS = "slurm-conf-differs"
    SLURMCTLD_HOSTS_DIFFER = "slurmctld-hosts-differ"
    SLURMCTLD_TIMEOUT_DIFFERS = "slurmctld-timeout-differs"
    STATE_SAVE_LOCATION_DIFFERS = "state-save-location-differs"
    STATE_SAVE_DEVICE_DIFFERS = "state-save-device-differs"
    # What the cluster keeps or tells is not right.
    SLURM_VERSION_DIFFERS = "slurm-version-differs"
    SLURMDBD_NOT_ANSWERING = "slurmdbd-not-answering"
    SLURMDBD_NO_CONTROLLER = "slurmdbd-no-controller"
    SLURMDBD_OTHER_CONTROLLER = "slurmdbd-other-controller"
    NOTIFICATIONS_OFF = "notifications-off"
    NOTIFICATION_PROGRAM_UNSET = "notification-program-unset"
    NOTIFICATION_PROGRAM_BROKEN = "notification-program-broken"
    SLURM_TRIGGERS_MISSING = "slurm-triggers-missing"
    SLURM_TRIGGER_PROGRAM_MISSING = "slurm-trigger-program-missing"
    CHECK_GAVE_NO_EVIDENCE = "check-gave-no-evidence"


@dataclass(frozen=True)
class ReasonKind:
    """One code's row: its severity when it is a problem (None: it explains) and its meaning."""

    code: ReasonCode
    severity: int | None
    meaning: str


C = ReasonCode
_ROWS: Final = (
    ReasonKind(C.PRIMARY_ACTIVE, None, "the configured primary is active, and the evidence that says so"),
    ReasonKind(C.BACKUP_TOOK_OVER, None, "a backup (SlurmctldHost[n]) took over from the primary"),
    ReasonKind(C.ACTIVE_CONTROLLER, None, "a controller acts as the active one, and the evidence"),
    ReasonKind(C.CONTROLLER_STATE, None, "how one controller is: its slurmctld, logged role, ping"),
    ReasonKind(C.STANDBY_DOWN, None, "a standby (or the old primary) is down: the redundancy counts it"),
    ReasonKind(C.STANDBY_UNCHECKED, None, "a standby could not be checked but answers ping"),
    ReasonKind(C.NOT_A_SLURMCTLD_HOST, None, "a checked node is not one of the SlurmctldHost lines"),
    ReasonKind(C.SLURMDBD_REGISTERED_HOST, None, "slurmdbd has a host registered that is no controller"),
    ReasonKind(C.HYPERPOD_REPORTED, None, "what the trigger's source (HyperPod) said, in its words"),
    ReasonKind(C.MAINTENANCE_IN_PROGRESS, None, "HyperPod updates the cluster: the incident waits"),
    ReasonKind(C.MAINTENANCE_ENDED, None, "maintenance was seen and ended; the verdict is from after it"),
    ReasonKind(C.MAINTENANCE_OVERDUE, None, "maintenance did not end in time: the verdict is final"),
    ReasonKind(C.NO_CONTROLLER_CHECKED, 1, "no controller could be checked (UNKNOWN)"),
    ReasonKind(C.NO_ACTIVE_CONTROLLER, 1, "no controller is active (DOWN)"),
    ReasonKind(C.SEVERAL_ACTIVE, 1, "more than one controller acts as the active one (SPLIT_BRAIN)"),
    ReasonKind(C.HEARTBEAT_SEVERAL_WRITERS, 1, "several controllers wrote the heartbeat within moments"),
    ReasonKind(C.HEARTBEAT_HOLDER_UNREACHABLE, 1, "a controller nobody reaches keeps the heartbeat fresh"),
    ReasonKind(C.ACTIVE_NOT_A_SLURMCTLD_HOST, 2, "the active controller is no SlurmctldHost line"),
    ReasonKind(C.ACTIVE_NOT_CHECKED, 2, "the active controller could not be checked"),
    ReasonKind(C.TWO_NODES_ONE_CONTROLLER, 2, "two checked nodes map to one SlurmctldHost line"),
    ReasonKind(C.TAKEOVER_REFUSED, 2, "a standby refuses to take over, in Slurm's words"),
    ReasonKind(C.TAKEOVER_WAITS_FOR_HEARTBEAT, 2, "a standby waits for the heartbeat file to exist"),
    ReasonKind(C.SLURMCTLD_FATAL, 2, "a slurmctld exited on a fatal error, in its words"),
    ReasonKind(C.CONFIG_CHANGE_CRASH, 1, "controllers died after a change to slurm.conf or a topology file"),
    ReasonKind(
        C.SLURMCTLD_READINESS, None, "what slurmctld's own /readyz says, where it differs from the log"
    ),
    ReasonKind(C.NOTIFICATIONS_FAILED, None, "the ON/OFF program failed to publish to the topic"),
    ReasonKind(C.HEARTBEAT_HOLDER_HUNG, 2, "the heartbeat's writer holds it but does not answer"),
    ReasonKind(C.HEARTBEAT_WRITER_NOT_ACTIVE, 2, "the heartbeat's writer is not active: a takeover is due"),
    ReasonKind(C.HEARTBEAT_NOT_WRITTEN, 2, "nobody (or not the active controller) writes the heartbeat"),
    ReasonKind(C.HEARTBEAT_WRITTEN_BY_OTHER, 2, "the heartbeat is written by another than the active"),
    ReasonKind(C.HEARTBEAT_UNREADABLE, 2, "the heartbeat cannot be read: that controller cannot take over"),
    ReasonKind(C.STATE_SAVE_ERROR, 2, "StateSaveLocation could not be checked"),
    ReasonKind(C.STATE_SAVE_MISSING, 2, "StateSaveLocation does not exist"),
    ReasonKind(C.STATE_SAVE_NOT_WRITABLE, 2, "StateSaveLocation is not writable"),
    ReasonKind(C.STATE_SAVE_FILESYSTEM, 2, "StateSaveLocation is not on the expected file system type"),
    ReasonKind(C.STATE_SAVE_FILESYSTEMS_DIFFER, 2, "controllers see StateSaveLocation on other file systems"),
    ReasonKind(C.SINFO_FAILS, 2, "sinfo on a controller cannot reach the active slurmctld"),
    ReasonKind(C.NO_COMPUTE_NODE_RESPONDS, 2, "no compute node responds to the active controller"),
    ReasonKind(C.STANDBY_IN_FLUX, 2, "a controller starts, stops or takes over while another is active"),
    ReasonKind(C.STANDBY_CANNOT_REACH_ACTIVE, 2, "a standby's ping says the active controller is DOWN"),
    ReasonKind(C.STANDBY_NOT_ANSWERING_PING, 2, "a standby does not answer the active controller's ping"),
    ReasonKind(C.NO_READY_STANDBY, 2, "no standby is ready: one more failure stops the cluster"),
    ReasonKind(C.SLURM_CONF_LOCAL_COPY, 2, "a controller's slurm.conf is a local copy, not the shared one"),
    ReasonKind(C.SLURM_CONF_DIFFERS, 2, "slurm.conf differs between controllers"),
    ReasonKind(C.SLURMCTLD_HOSTS_DIFFER, 2, "the SlurmctldHost list differs between controllers"),
    ReasonKind(C.SLURMCTLD_TIMEOUT_DIFFERS, 2, "SlurmctldTimeout differs between controllers"),
    ReasonKind(C.STATE_SAVE_LOCATION_DIFFERS, 2, "StateSaveLocation differs between controllers"),
    ReasonKind(C.STATE_SAVE_DEVICE_DIFFERS, 2, "StateSaveLocation's file system differs between controllers"),
    ReasonKind(C.SLURM_VERSION_DIFFERS, 3, "the Slurm version differs between controllers"),
    ReasonKind(C.SLURMDBD_NOT_ANSWERING, 3, "slurmdbd does not answer (accounting records queue up)"),
    ReasonKind(C.SLURMDBD_NO_CONTROLLER, 3, "slurmdbd answers but no controller is registered"),
    ReasonKind(C.SLURMDBD_OTHER_CONTROLLER, 3, "slurmdbd has another controller than the active registered"),
    ReasonKind(C.NOTIFICATIONS_OFF, 3, "no SlurmctldPrimaryOnProg or OffProg: the failover topic is silent"),
    ReasonKind(C.NOTIFICATION_PROGRAM_UNSET, 3, "one of SlurmctldPrimaryOnProg/OffProg is not set"),
    ReasonKind(
        C.NOTIFICATION_PROGRAM_BROKEN, 3, "a SlurmctldPrimaryOnProg/OffProg is missing or not executable"
    ),
    ReasonKind(
        C.SLURM_TRIGGERS_MISSING, 3, "SlurmTriggers=on: Slurm triggers the stack installs are not set"
    ),
    ReasonKind(
        C.SLURM_TRIGGER_PROGRAM_MISSING,
        3,
        "a controller lacks the Slurm triggers' program (or it is not executable)",
    ),
    ReasonKind(C.CHECK_GAVE_NO_EVIDENCE, 3, "a check that names no controller gave nothing"),
)
del C
REASONS: Final[Mapping[ReasonCode, ReasonKind]] = MappingProxyType({row.code: row for row in _ROWS})


@dataclass(frozen=True)
class Reason:
    """One reason of a verdict: its code and the text on-call reads."""

    code: ReasonCode
    text: str

    @property
    def severity(self) -> int | None:
        return REASONS[self.code].severity

    def __str__(self) -> str:
        return self.text


def most_severe(reasons: Iterable[Reason]) -> Reason | None:
    """The problem a headline says: the lowest severity number, the first of them on a tie;
    None when no reason is a problem."""
    problems = [(r.severity, i, r) for i, r in enumerate(reasons) if r.severity is not None]
    return min(problems, key=lambda found: (found[0], found[1]))[2] if problems else None


def texts(reasons: Iterable[Reason]) -> list[str]:
    return [reason.text for reason in reasons]


def codes(reasons: Iterable[Reason]) -> list[str]:
    return [reason.code.value for reason in reasons]
