"""The early warnings' samples (controller-overloaded, accounting-at-risk) for docs/messages.md,
made by the real rules and the watchdog's request from fixed figures."""

from __future__ import annotations

from hyperpod_ha.incidents import OpenRequest
from hyperpod_ha.incidents import messages as incident_messages
from hyperpod_ha.topic_messages import TopicMessage
from hyperpod_ha.verdict.reasons import Reason, ReasonCode
from hyperpod_ha_stack.sample_inputs import CLUSTER, NOW, REGION, STACK_NAME, WELL_EVIDENCE, opened_incident


def _early_warning(overloaded: bool) -> TopicMessage:
    from hyperpod_ha.early_warning.models import ACTIVE, ControllerFigures, RpcLoad
    from hyperpod_ha.early_warning.rules import accounting_at_risk
    from hyperpod_ha.early_warning.rules import overloaded as overload
    from hyperpod_ha.early_warning.settings import WarningThresholds
    from hyperpod_ha.early_warning.watch import open_request
    from hyperpod_ha.verdict import FAILED_OVER, Verdict
    from hyperpod_ha.watchdog.tick import Tick

    figures = ControllerFigures(
        controller="ctl2",
        role=ACTIVE,
        instance_id="i-02a2b3c4d5e6f702",
        server_threads=97 if overloaded else 3,
        agent_queue=12,
        dbd_agent_queue=3 if overloaded else 6480,
        max_dbd_msgs=20008,
        rpc_average_ms=1850.0 if overloaded else 2.1,
        rpc_window_seconds=300,
        slowest_types=(RpcLoad("REQUEST_JOB_INFO", 41200, 2210.0), RpcLoad("REQUEST_NODE_INFO", 900, 1630.0)),
        busiest_users=(RpcLoad("alice", 40100, 2190.0), RpcLoad("root", 310, 12.0)),
        dbd_queue_rate=None if overloaded else 4.5,
        slurmdbd_answers=overloaded,
        round_trip_ms=6200 if overloaded else 40,
    )
    thresholds = WarningThresholds()
    warning = overload(figures, thresholds) if overloaded else accounting_at_risk(figures, thresholds)
    assert warning is not None
    active = (Reason(ReasonCode.BACKUP_TOOK_OVER, "ctl2 (SlurmctldHost[1]) took over: it is active"),)
    verdict = Verdict(FAILED_OVER, active, "ctl2", "ctl1", WELL_EVIDENCE)
    tick = Tick("tick-2026-12-01T09:58", "2026-12-01T09:58:00Z")
    since = int(NOW - 600) if overloaded else int(NOW)
    request = OpenRequest.from_event(open_request(CLUSTER, tick, verdict, warning, since, NOW))
    return incident_messages.opened(request, opened_incident(request), REGION, NOW, stack_name=STACK_NAME)


def controller_overloaded() -> TopicMessage:
    return _early_warning(overloaded=True)


def accounting_at_risk() -> TopicMessage:
    return _early_warning(overloaded=False)
