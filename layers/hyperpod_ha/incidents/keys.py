"""The names incidents are found by: source, kinds, operational-data keys, and the stable keys
that make a retried call have no second effect (the OpsItem's dedup string, Incident Manager's
client token)."""

from __future__ import annotations

import hashlib

from hyperpod_ha.topic_messages import dedup_key

SOURCE = "hyperpod-ha"
CATEGORY = "Availability"

KIND_VERIFICATION_ERROR = "verification-error"
KIND_ROLLOUT_FAILED = "rollout-failed"
# HyperPod changed the external accounting database's configuration, the change failed and
# HyperPod could not revert it (a cluster event's DatabaseConfiguration.RollbackStatus).
KIND_DATABASE_REVERT_FAILED = "accounting-database-revert-failed"
# No ready standby for RedundancyGraceMinutes (the watchdog's ticks open and resolve it).
KIND_REDUNDANCY_LOST = "redundancy-lost"
# A verified failover says nothing about the database secret on every controller, nor about
# HyperPod's database configuration, the standbys left (a FAILED_OVER run with none) or a warning:
# these are only resolved when the caller names them.
# The watchdog's early warnings (hyperpod_ha.early_warning), resolved by its first tick without.
KIND_CONTROLLER_OVERLOADED = "controller-overloaded"
KIND_ACCOUNTING_AT_RISK = "accounting-at-risk"
KINDS_NOT_RESOLVED_BY_DEFAULT = frozenset(
    {
        KIND_ROLLOUT_FAILED,
        KIND_DATABASE_REVERT_FAILED,
        KIND_REDUNDANCY_LOST,
        KIND_CONTROLLER_OVERLOADED,
        KIND_ACCOUNTING_AT_RISK,
    }
)

# Operational-data keys. Custom keys must not start with aws, amazon, amzn or ssm.
DEDUP_KEY = "/aws/dedup"
RESOURCES_KEY = "/aws/resources"
_PREFIX = "hyperpod-ha:"
CLUSTER_KEY = _PREFIX + "cluster"
KIND_KEY = _PREFIX + "kind"
VERDICT_KEY = _PREFIX + "verdict"
EXECUTION_KEY = _PREFIX + "execution"  # the execution that opened the OpsItem
NOTIFIED_KEY = _PREFIX + "notified-execution"  # the last execution whose message went out
INCIDENT_KEY = _PREFIX + "incident"
REASONS_KEY = _PREFIX + "reasons"
ERROR_KEY = _PREFIX + "error"
SNAPSHOT_KEY = _PREFIX + "snapshot"
RESOLVED_BY_KEY = _PREFIX + "resolved-by"
RESOLUTION_KEY = _PREFIX + "resolution"
RECOVERY_NOTIFIED_KEY = _PREFIX + "recovery-notified-execution"
EVIDENCE_PREFIX = _PREFIX + "evidence:"
# What each restore of redundancy did while the OpsItem was open (a JSON list, oldest first).
RESTORE_ACTIONS_KEY = _PREFIX + "restore-actions"


def dedup_string(cluster: str, kind: str) -> str:
    """OpsCenter creates no second open OpsItem with the same one; every message about the
    problem carries it as its ``dedup_key`` attribute."""
    return dedup_key(cluster, kind)


def incident_client_token(execution_id: str, kind: str) -> str:
    digest = hashlib.sha256(f"incident\n{execution_id}\n{kind}".encode()).hexdigest()
    return f"{SOURCE}-{digest[:48]}"
