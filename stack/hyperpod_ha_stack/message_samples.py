"""One sample of every message kind, made by the real builders with fixed inputs (docs/messages.md
is written from them by :mod:`hyperpod_ha_stack.messages_page`;
``tests/unit/topic_messages/test_message_samples.py`` fails while a kind of
:mod:`hyperpod_ha.topic_messages.kinds` has no sample). The subscription filter
policies the page shows are :data:`FILTER_POLICIES`, checked against the messages really sent by
``tests/functions/test_filter_policies.py``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from hyperpod_ha import console_links
from hyperpod_ha.drill.summary import summary
from hyperpod_ha.incidents import OpenRequest, ResolveRequest
from hyperpod_ha.incidents import messages as incident_messages
from hyperpod_ha.incidents.messages import ResolvedIncident
from hyperpod_ha.ingestion import hyperpod_notices
from hyperpod_ha.ingestion.cluster_event_metadata import DatabaseConfiguration
from hyperpod_ha.ingestion.hyperpod_events import ClusterEvent, ClusterStateChange, NodeHealthEvent
from hyperpod_ha.notices import messages as notice_messages
from hyperpod_ha.notices.aws_events import AlarmChange, RotationEvent
from hyperpod_ha.notices.messages import Stack
from hyperpod_ha.rotation.rollout_incident import rollout_failed
from hyperpod_ha.topic_messages import TopicMessage
from hyperpod_ha.verdict.reasons import Reason, ReasonCode
from hyperpod_ha_stack.early_warning_samples import accounting_at_risk, controller_overloaded
from hyperpod_ha_stack.sample_inputs import (
    CLUSTER,
    CLUSTER_ARN,
    DOWN_REASONS,
    DRILL_EXECUTION,
    EXECUTION,
    NOW,
    OPS_ITEM,
    REGION,
    SECRET,
    STACK_NAME,
    WELL_EVIDENCE,
    controller_entry,
    incident_request,
    opened_incident,
    run_links,
    trigger_fields,
)

# Subscription filter policies (FilterPolicyScope MessageAttributes, the default).
FILTER_POLICIES: Final = {
    # Pages for severity 1 and 2: openings, reminders and their resolutions, and the notice path's
    # own alarms, which reach the topic as CloudWatch's raw JSON without attributes.
    "paging": {"$or": [{"severity": ["1", "2"]}, {"severity": [{"exists": False}]}]},
    # A chat channel: everything but the reminders (and the notice path's own alarms, which
    # have no attributes: an attribute's condition never matches a message without it).
    "chat": {"$or": [{"event": [{"anything-but": ["reminder"]}]}, {"event": [{"exists": False}]}]},
}


def down() -> TopicMessage:
    request = incident_request(verdict="DOWN", reasons=list(DOWN_REASONS))
    return incident_messages.opened(request, opened_incident(request), REGION, NOW, stack_name=STACK_NAME)


def down_reminder() -> TopicMessage:
    request = incident_request(verdict="DOWN", reasons=list(DOWN_REASONS))
    return incident_messages.reminder(
        request,
        opened_incident(request, created=False, opened_ago=3700),
        REGION,
        NOW,
        3600,
        stack_name=STACK_NAME,
    )


def degraded() -> TopicMessage:
    problem = "slurmdbd does not answer from ctl1, ctl2: Connection refused"
    request = incident_request(
        verdict="DEGRADED",
        problem=problem,
        evidence={
            "ctl1": controller_entry(
                1, active=True, slurmctld="running", answers_ping=True, slurmdbd_reachable=False
            ),
            "ctl2": controller_entry(
                2, active=False, slurmctld="running", answers_ping=True, slurmdbd_reachable=False
            ),
        },
        reasons=[
            "ctl1 is active: logged 'Running as primary controller' 2 d 4 h ago, answers ping",
            problem + "; 212 accounting records wait in slurmctld's DBD agent queue",
        ],
        **trigger_fields("eventbridge", "5b3c0f6e-2d4a-4e8b-9c1d-7e6f5a4b3c2d"),
    )
    return incident_messages.opened(request, opened_incident(request), REGION, NOW, stack_name=STACK_NAME)


def split_brain() -> TopicMessage:
    request = incident_request(
        verdict="SPLIT_BRAIN",
        evidence={
            "ctl1": controller_entry(1, active=True, slurmctld="running", answers_ping=True),
            "ctl2": controller_entry(2, active=True, slurmctld="running", answers_ping=True),
        },
        reasons=[
            "ctl1 and ctl2 both act as the active controller",
            "ctl1 logged 'Running as primary controller' 3 min ago; ctl2 logged it 2 min ago",
        ],
    )
    return incident_messages.opened(request, opened_incident(request), REGION, NOW, stack_name=STACK_NAME)


def unknown() -> TopicMessage:
    evidence = {
        name: controller_entry(i, status="UNREACHABLE", reason="Session Manager: TargetNotConnected")
        for i, name in ((1, "ctl1"), (2, "ctl2"))
    }
    request = incident_request(
        verdict="UNKNOWN", evidence=evidence, reasons=["no controller could be checked"]
    )
    return incident_messages.opened(request, opened_incident(request), REGION, NOW, stack_name=STACK_NAME)


def verification_error() -> TopicMessage:
    request = incident_request(
        verdict="UNKNOWN",
        kind="verification-error",
        evidence={},
        reasons=["verification could not complete"],
        error={"Error": "States.Timeout", "Cause": "HealthCheckFunction did not answer within 120 s"},
    )
    return incident_messages.opened(request, opened_incident(request), REGION, NOW, stack_name=STACK_NAME)


def rollout() -> TopicMessage:
    controller = {
        "instance_id": "i-02a2b3c4d5e6f7002",
        "group": "controller-machine",
        "status": "Running",
        "private_ip": "10.1.0.12",
        "hostname": "ip-10-1-0-12",
        "target": "sagemaker-cluster:abcd1234efgh_controller-machine-i-02a2b3c4d5e6f7002",
    }
    request = rollout_failed(CLUSTER, SECRET, controller, "slurmdbd did not answer within 45 s")
    return incident_messages.opened(request, opened_incident(request), REGION, NOW, stack_name=STACK_NAME)


def database_revert_failed() -> TopicMessage:
    from hyperpod_ha.ingestion.database_incidents import revert_failed_request

    database = DatabaseConfiguration("RevertFailed", "Restore the endpoint in DescribeCluster", "timed out")
    event = revert_failed_request(CLUSTER, "e-4c1d", database, "2026-12-01T09:55:00Z")
    request = OpenRequest.from_event(event)
    return incident_messages.opened(request, opened_incident(request), REGION, NOW, stack_name=STACK_NAME)


def accounting_buffer_full() -> TopicMessage:
    from hyperpod_ha.ingestion.slurm_trigger_records import buffer_full_request
    from hyperpod_ha.slurm.triggers import EVENTS, TriggerMessage

    message = TriggerMessage(
        EVENTS["primary_slurmctld_acct_buffer_full"], "ip-10-1-0-12", "2026-12-01T09:59:00Z"
    )
    event = buffer_full_request(CLUSTER, "3e9b6c1d-4f2a-4b8e-9d7c-5a6b7c8d9e0f", message, EXECUTION)
    request = OpenRequest.from_event(event)
    return incident_messages.opened(request, opened_incident(request), REGION, NOW, stack_name=STACK_NAME)


_NO_STANDBY: Final = (
    (
        ReasonCode.BACKUP_TOOK_OVER,
        "ctl2 (SlurmctldHost[1]) took over from ctl1: writes the heartbeat (last beat 2 s ago)",
    ),
    (
        ReasonCode.NO_READY_STANDBY,
        "no standby is ready: one more failure stops the cluster "
        "(ctl2 is active; ctl1: slurmctld not running)",
    ),
    (ReasonCode.STANDBY_DOWN, "ctl1 (the configured primary): slurmctld not running"),
)


def redundancy_lost() -> TopicMessage:
    from hyperpod_ha.verdict import FAILED_OVER, Verdict
    from hyperpod_ha.watchdog.redundancy_loss import open_request
    from hyperpod_ha.watchdog.tick import Tick

    verdict = Verdict(
        FAILED_OVER,
        tuple(Reason(code, text) for code, text in _NO_STANDBY),
        "ctl2",
        "ctl1",
        WELL_EVIDENCE,
        redundancy="none",
        not_ready={"ctl1": "slurmctld not running"},
    )
    tick = Tick("tick-2026-12-01T09:58", "2026-12-01T09:58:00Z")
    request = OpenRequest.from_event(open_request(CLUSTER, tick, verdict, int(NOW - 720), NOW))
    return incident_messages.opened(request, opened_incident(request), REGION, NOW, stack_name=STACK_NAME)


def drill_not_verified() -> TopicMessage:
    request = incident_request(
        verdict="DOWN",
        kind="drill-not-verified",
        evidence={"ctl1": controller_entry(1), "ctl2": controller_entry(2)},
        reasons=["the takeover was not verified FAILED_OVER (last verdict DOWN)"],
        trigger={"source": "operator", "id": "drill-7f3a", "time": ""},
        run_reason="failover drill",
    )
    return incident_messages.opened(request, opened_incident(request), REGION, NOW, stack_name=STACK_NAME)


def _resolve(verdict: str, reasons: list[Reason]) -> ResolveRequest:
    event = {"cluster": CLUSTER, "verdict": verdict, "execution_id": EXECUTION, "evidence": WELL_EVIDENCE}
    told = {"reasons": [r.text for r in reasons], "reason_codes": [r.code.value for r in reasons]}
    return ResolveRequest.from_event({**event, **told, **trigger_fields("sns", "9d1e0f3a-6b2c")})


def recovered() -> TopicMessage:
    took_over = "ctl2 (SlurmctldHost[1]) took over from ctl1: writes the heartbeat"
    request = _resolve("FAILED_OVER", [Reason(ReasonCode.BACKUP_TOOK_OVER, took_over)])
    item = ResolvedIncident(
        OPS_ITEM, "DOWN", "1", console_links.ops_item_console_url(OPS_ITEM, REGION), NOW - 900
    )
    (recovery,) = incident_messages.recovered(
        request, [item], run_links().execution, REGION, NOW, stack_name=STACK_NAME
    )
    return recovery


def verified() -> TopicMessage:
    active = "ctl1 (configured primary) is active: writes the heartbeat (last beat 2 s ago)"
    request = _resolve("HEALTHY", [Reason(ReasonCode.PRIMARY_ACTIVE, active)])
    return incident_messages.verified(request, run_links().execution, REGION, NOW, stack_name=STACK_NAME)


def verified_no_standby() -> TopicMessage:
    request = _resolve("FAILED_OVER", [Reason(code, text) for code, text in _NO_STANDBY])
    return incident_messages.verified(request, run_links().execution, REGION, NOW, stack_name=STACK_NAME)


def workers() -> TopicMessage:
    event = NodeHealthEvent(
        "7c2d5e8f", CLUSTER, CLUSTER_ARN, "i-0f0f0f0f0f0f00006", "Unhealthy", "GPU XID error", "Replace",
        "2026-12-01T09:59:20Z",
    )  # fmt: skip
    return hyperpod_notices.workers_unhealthy(
        event, 6, int(NOW) - 420, 600, REGION, NOW, stack_name=STACK_NAME
    )


def cluster_failed() -> TopicMessage:
    event = ClusterStateChange(
        "3e4f5a6b", CLUSTER, CLUSTER_ARN, "Failed", "Lifecycle script failed", "2026-12-01T09:58:00Z"
    )
    return hyperpod_notices.cluster_status(event, REGION, NOW, stack_name=STACK_NAME)


def database_reverted() -> TopicMessage:
    event = ClusterEvent(
        "e-4c2e", CLUSTER, CLUSTER_ARN, "Warn", "Cluster", "", None, None, "2026-12-01T09:57:00Z"
    )
    database = DatabaseConfiguration("Reverted", "No action needed", "The new endpoint did not answer")
    return hyperpod_notices.accounting_database_change(
        event, database, "reverted", REGION, NOW, stack_name=STACK_NAME
    )


def drill() -> TopicMessage:
    report = {
        "outcome": "completed",
        "cluster": CLUSTER,
        "reasons": [],
        "from": "ctl1",
        "to": "ctl2",
        "from_controller": {"name": "ctl1", "instance_id": "i-01a2b3c4d5e6f7001", "address": "10.1.0.11"},
        "to_controller": {"name": "ctl2", "instance_id": "i-02a2b3c4d5e6f7002", "address": "10.1.0.12"},
        "takeover_seconds": 14.2,
        "verified_seconds": 96.8,
        "verdict": "HEALTHY",
        "verdict_reasons": ["ctl1 (configured primary) is active: writes the heartbeat"],
        "verified": True,
        "jobs": {"before": ["4101", "4102"], "survived": ["4101", "4102"], "lost": []},
        "test_job": {"id": "4103", "state": "COMPLETED", "ran": True, "seconds": 3.9},
        "hand_back": {"to": "ctl1", "takeover_seconds": 12.0, "verified_seconds": 88.5},
        "execution_id": DRILL_EXECUTION,
        "execution_link": console_links.execution_console_url(DRILL_EXECUTION, REGION),
        "started_at": NOW - 330,
    }
    return summary(report, REGION, NOW, stack_name=STACK_NAME)


_STACK: Final = Stack(CLUSTER, REGION, f"{STACK_NAME}.", f"/aws/lambda/{STACK_NAME}-RotateDbSecretFunction")


def rotation() -> TopicMessage:
    return notice_messages.rotation_failed(
        RotationEvent("5e1f7a3c", "RotationFailed", SECRET, NOW - 140), _STACK, NOW
    )


def restore_action() -> TopicMessage:
    from hyperpod_ha.restore.record import restore_notice

    target = "sagemaker-cluster:a1b2c3d4e5f6_controller-machine-i-02a2b3c4d5e6f7002"
    command = (
        f"aws ssm start-session --target {target} --document-name hyperpod-ha-RestoreSlurmctldDocument-x1"
    )
    record = {
        "mode": "standbys",
        "dry_run": False,
        "verdict": "DEGRADED",
        "active_controller": "ctl1",
        "stopped": None,
        "reasons": ["restoring: start slurmctld on ctl2 (slurmctld not running)"],
        "actions": [
            {
                "controller": "ctl2",
                "kind": "start-slurmctld",
                "restored": True,
                "what": "ctl2: slurmctld runs, logged the standby role and answers ping",
                "command": command,
            }
        ],
        "not_taken": [],
    }
    return restore_notice(CLUSTER, record)


def slurm_advisory() -> TopicMessage:
    from hyperpod_ha.incidents.advisory_notices import advisory_notice
    from hyperpod_ha.slurm.advisories import applying
    from hyperpod_ha.status_records import advisories_record

    applied = [row.to_json() for row in applying({"ctl1": "24.11.5", "ctl2": "24.11.5"})]
    (row,) = advisories_record({"advisories": applied})
    return advisory_notice(CLUSTER, REGION, row)


def alarm() -> TopicMessage:
    change = AlarmChange(
        "c4a8e2f6",
        "hyperpod-ha.WatchdogErrorsAlarm",
        "WatchdogFunction raised errors (see its log group).",
        "ALARM",
        "OK",
        "Threshold Crossed: 1 out of the last 1 datapoints [2.0 (01/12/26 09:55:00)] was greater than the "
        "threshold (0.0).",
        NOW - 60,
    )
    return notice_messages.alarm_changed(change, _STACK, NOW)


@dataclass(frozen=True)
class Sample:
    title: str
    when: str  # when it is sent
    make: Callable[[], TopicMessage]


SAMPLES: Final = (
    Sample(
        "DOWN: incident opened", "a run finds no controller active (the run that opens the OpsItem)", down
    ),
    Sample(
        "DOWN: still open",
        "a later run finds it open again, at most once per ReminderMinutes",
        down_reminder,
    ),
    Sample("DEGRADED", "the active controller serves, but something it needs is unhealthy", degraded),
    Sample("SPLIT_BRAIN", "more than one controller acts as the active one", split_brain),
    Sample("UNKNOWN", "no controller could be checked", unknown),
    Sample(
        "verification-error",
        "the verification run itself failed (a step's error, a timeout)",
        verification_error,
    ),
    Sample("rollout-failed", "a controller did not take the rotated database credentials", rollout),
    Sample(
        "accounting-database-revert-failed",
        "HyperPod could not revert a change of the external accounting database",
        database_revert_failed,
    ),
    Sample(
        "redundancy-lost",
        "the watchdog has seen no ready standby for RedundancyGraceMinutes (a dead standby, or a "
        "failover with nothing left to fail over to)",
        redundancy_lost,
    ),
    Sample(
        "controller-overloaded",
        "the watchdog has seen the active controller past a threshold for OverloadWindowMinutes",
        controller_overloaded,
    ),
    Sample(
        "accounting-at-risk",
        "slurmdbd or its database is away and the DBD agent queue grows toward MaxDBDMsgs",
        accounting_at_risk,
    ),
    Sample(
        "accounting-at-risk: Slurm's trigger",
        "Slurm's trigger primary_slurmctld_acct_buffer_full reached the failover topic: slurmctld "
        "drops accounting records now (the same OpsItem as the watchdog's warning)",
        accounting_buffer_full,
    ),
    Sample("drill-not-verified", "a drill left the cluster not verified", drill_not_verified),
    Sample("recovered", "a run verifies the cluster and resolves what was open", recovered),
    Sample("verified", "a run verifies the cluster and nothing was open", verified),
    Sample(
        "verified: no standby ready",
        "a run verifies a failover that left no standby (redundancy none): the notice says so",
        verified_no_standby,
    ),
    Sample(
        "workers-unhealthy", "more than MassFailureThreshold workers unhealthy within the window", workers
    ),
    Sample("cluster-status", "HyperPod reports the cluster Failed or RollingBack", cluster_failed),
    Sample(
        "accounting-database-change", "HyperPod reverted an accounting database change", database_reverted
    ),
    Sample("drill", "a failover drill ended (completed, refused or failed)", drill),
    Sample("rotation-failed", "Secrets Manager reports RotationFailed or RotationAbandoned", rotation),
    Sample("alarm", "one of the stack's alarms goes to ALARM (and back to OK)", alarm),
    Sample(
        "restore-action",
        "a restore of redundancy started slurmctld (or could not, or left it to you)",
        restore_action,
    ),
    Sample(
        "slurm-advisory",
        "a run finds the controllers on a release a known defect or security advisory affects (once "
        "per advisory and release)",
        slurm_advisory,
    ),
)


def sampled_kinds() -> set[str]:
    return {sample.make().attributes["kind"] for sample in SAMPLES}
