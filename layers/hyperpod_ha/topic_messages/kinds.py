"""Every kind of problem or notice the stack tells people about, one row each: its severity, the
headline a subject, a first line and an OpsItem's title say, and what on-call looks at first.

A new incident kind or notice is one row here, and one sample in
``hyperpod_ha_stack.message_samples`` (which writes docs/messages.md; a test fails until it has
one). The severity is OpsCenter's scale, which message attributes carry too: ``"1"`` critical
.. ``"4"`` low. A row without one takes the verdict's (a drill that left the cluster DOWN is as
severe as DOWN).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

SEVERITIES: Final = ("1", "2", "3", "4")
# A kind or verdict nobody described is as uncertain as UNKNOWN.
DEFAULT_SEVERITY: Final = "2"


@dataclass(frozen=True)
class MessageKind:
    name: str
    # What happened, in a few words: a subject's, a first line's and an OpsItem title's words.
    headline: str
    # "1".."4"; None: the verdict's (the row named after the verdict).
    severity: str | None
    # What on-call looks at first, beyond the controllers' log and state directory.
    look_at: tuple[str, ...] = ()
    incident: bool = True  # an OpsItem (opened, reminded, resolved) rather than a notice


_SLURMCTLD = "slurmctld on each controller: `systemctl status slurmctld`, `journalctl -u slurmctld`"
_STATE_SAVE = "whether StateSaveLocation on FSx is mounted and writable by SlurmUser (`df`, `ls -ld`)"
_RUN = "the verification run's failed step: its Step Functions link below, then that function's log"

KINDS: Final = {
    row.name: row
    for row in (
        # The verdicts a run opens an incident for (kind == verdict).
        MessageKind("DOWN", "no Slurm controller is active", "1", (_SLURMCTLD, _STATE_SAVE)),
        MessageKind(
            "SPLIT_BRAIN",
            "more than one Slurm controller is active",
            "1",
            (
                "which controller writes the heartbeat in StateSaveLocation; stop slurmctld on the other",
                _SLURMCTLD,
            ),
        ),
        MessageKind(
            "UNKNOWN",
            "no Slurm controller could be checked",
            "2",
            ("whether Session Manager reaches the controllers (the commands below)", _RUN),
        ),
        MessageKind(
            "DEGRADED",
            "the active Slurm controller serves, but something the cluster needs is unhealthy",
            "3",
            ("the first reason below: it names what is unhealthy and on which controller", _SLURMCTLD),
        ),
        # Incidents of their own kind.
        MessageKind("verification-error", "the failover verification itself failed", "2", (_RUN,)),
        MessageKind(
            "rollout-failed",
            "the database secret roll-out to the controllers failed",
            "2",
            (
                "slurmdbd on that controller: `systemctl status slurmdbd`, its log and slurmdbd.conf",
                'then the roll-out again: invoke RotateDbSecretFunction with {"action": "rollout"}',
            ),
        ),
        MessageKind(
            "accounting-database-revert-failed",
            "HyperPod could not revert a failed accounting database change",
            # slurmctld still schedules (not a 1), but accounting may go to a half-configured database.
            "2",
            ("the cluster's accounting database configuration (DescribeCluster, Orchestrator.Slurm)",),
        ),
        MessageKind(
            "redundancy-lost",
            "no standby Slurm controller is ready",
            "3",
            (
                "each controller the reasons name as not ready: `sudo systemctl start slurmctld` in "
                "its session (the command is in its reason) brings it back as a standby (a configured "
                "primary takes control back); the next watchdog tick resolves this",
                _SLURMCTLD,
            ),
        ),
        # Early warnings (the watchdog's): before the failure, resolved by the first tick without.
        MessageKind(
            "controller-overloaded",
            "the active Slurm controller is slow but alive",
            # The cluster still serves, and Slurm's HA will not act: not a 2.
            "3",
            (
                "the slowest RPC types and busiest users above, then `sdiag` on the active controller",
                "who runs `squeue`/`sinfo` in loops or submits job storms: `sdiag` by user",
            ),
        ),
        MessageKind(
            "accounting-at-risk",
            "accounting records at risk: slurmctld's queue for slurmdbd is filling or full",
            # Records are lost at a rate already measured (the watchdog's warning) or already
            # dropped (Slurm's trigger of a full buffer), and a failover now loses the queue.
            "2",
            (
                "do not fail over now: a takeover loses the records queued in slurmctld's memory",
                "slurmdbd and its database: `systemctl status slurmdbd`, its log, the database's reach",
            ),
        ),
        MessageKind(
            "drill-not-verified",
            "a failover drill left the cluster not verified",
            None,
            ("the drill's report (its OpsItem) and which controller is active now", _SLURMCTLD),
        ),
        # Notices: no OpsItem of their own.
        MessageKind("recovered", "recovered: the open problem is resolved", None, incident=False),
        MessageKind("verified", "failover verified", "4", incident=False),
        MessageKind(
            "workers-unhealthy",
            "many worker nodes unhealthy at once",
            "2",
            ("the nodes' health in the SageMaker console and `sinfo -R` on the active controller",),
            incident=False,
        ),
        MessageKind(
            "cluster-status",
            "the HyperPod cluster's status needs attention",
            "2",
            ("the cluster's FailureMessage and events in the SageMaker console",),
            incident=False,
        ),
        MessageKind(
            "accounting-database-change",
            "HyperPod changed the external accounting database configuration",
            "4",
            incident=False,
        ),
        MessageKind("drill", "failover drill", "4", incident=False),
        MessageKind(
            "rotation-failed",
            "a rotation of the slurmdbd database secret failed",
            "2",
            ("RotateDbSecretFunction's log (the command below) and the secret's versions",),
            incident=False,
        ),
        MessageKind("alarm", "an alarm of hyperpod-ha changed state", "2", incident=False),
        MessageKind(
            "slurm-advisory",
            "the controllers run a known-bad Slurm release",
            # Nothing is down: the verdict names it at every run, this tells people once.
            "4",
            (
                "the advisory's sources above and its fixed release: plan the controllers' Slurm "
                "upgrade (a HyperPod AMI with it, `UpdateClusterSoftware`)",
                "`hyperpod-ha status` names every advisory that applies at each run",
            ),
            incident=False,
        ),
        MessageKind(
            "restore-action",
            "slurmctld started again on a controller (RestoreRedundancy)",
            "4",
            (_SLURMCTLD, "the restore's execution: `hyperpod-ha status` names it"),
            incident=False,
        ),
    )
}


def kind(name: str) -> MessageKind:
    """The row of ``name``; a kind nobody described reads as itself, with the default severity."""
    return KINDS.get(name) or MessageKind(name, name, DEFAULT_SEVERITY)


# The verified verdicts are no incident's kind; a row without a severity (a drill that left the
# cluster FAILED_OVER) takes theirs from here.
_VERIFIED_SEVERITY: Final = {"FAILED_OVER": "3", "HEALTHY": "4"}


def severity_of(name: str, verdict: str = "") -> str:
    """The severity of a problem of kind ``name`` found with ``verdict``."""
    own = kind(name).severity
    if own is not None:
        return own
    if verdict in _VERIFIED_SEVERITY:
        return _VERIFIED_SEVERITY[verdict]
    return (KINDS[verdict].severity if verdict in KINDS else None) or DEFAULT_SEVERITY
