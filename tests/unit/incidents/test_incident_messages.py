"""What an incident's messages say: what happened and on whom, when and what triggered the run,
every controller by name, instance id and address, every reason, and what to do next."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hyperpod_ha.incidents import OpenRequest, ResolveRequest
from hyperpod_ha.incidents.messages import (
    OpenedIncident,
    ResolvedIncident,
    opened,
    recovered,
    reminder,
    verified,
)
from hyperpod_ha.incidents.models import MAX_REASONS
from hyperpod_ha.incidents.ops_item import ops_item_request
from hyperpod_ha.topic_messages import Links, check_form
from tests.unit.incidents.cases.incident_world import EXECUTION, NOW

TARGET = "sagemaker-cluster:abcd1234efgh_controller-machine-"
EVIDENCE = {
    "ctl1": {
        "position": 0,
        "instance_id": "i-0aaaaaaaaaaaaaaa1",
        "address": "10.1.0.11",
        "target": TARGET + "i-0aaaaaaaaaaaaaaa1",
        "status": "CHECKED",
        "active": False,
        "slurmctld": "stopped",
        "answers_ping": False,
        "slurmctld_log": "/var/log/slurm/slurmctld.log",
        "state_save_location": "/fsx/slurm/state",
    },
    "ctl2": {
        "position": 1,
        "instance_id": "i-0aaaaaaaaaaaaaaa2",
        "address": "10.1.0.12",
        "target": TARGET + "i-0aaaaaaaaaaaaaaa2",
        "status": "UNREACHABLE",
        "reason": "Session Manager: TargetNotConnected",
    },
}
BOTH_DOWN = [
    "no controller is active",
    "ctl1: slurmctld stopped (process state T), does not answer ping",
    "ctl2: unreachable: Session Manager: TargetNotConnected",
    "nobody writes the heartbeat: last beat 3 min 20 s ago by ctl1",
    "a backup takes over after SlurmctldTimeout (120 s)",
]
INCIDENT = OpenedIncident("oi-0123456789ab", True, "1", None, Links("https://run", "https://ops-item"))


def _request(**changes: Any) -> OpenRequest:
    event: dict[str, Any] = {
        "cluster": "ml-cluster",
        "verdict": "DOWN",
        "reasons": BOTH_DOWN,
        "evidence": EVIDENCE,
        "execution_id": EXECUTION,
        "trigger": {"source": "watchdog", "id": "tick-7", "time": "2026-12-01T09:58:00Z"},
        "started_at": "2026-12-01T09:58:01.250Z",
        "run_reason": "watchdog: DOWN",
        **changes,
    }
    return OpenRequest.from_event(event)


def _lines(body: str, after: str) -> list[str]:
    lines = body.splitlines()
    start = lines.index(after) + 1
    end = lines.index("", start) if "" in lines[start:] else len(lines)
    return lines[start:end]


def test_the_opened_message_says_when_and_what_triggered_the_run() -> None:
    message = opened(_request(), INCIDENT, "us-west-2", NOW)
    check_form(message)
    assert message.subject == "[hyperpod-ha] ml-cluster: DOWN: no Slurm controller is active (sev 1)"
    assert "Detected:     2026-12-01 10:00 UTC" in message.body
    assert (
        "Triggered by: the watchdog's scheduled check (tick-7), 2 min ago (2026-12-01 09:58 UTC)"
        in message.body
    )
    assert "Run reason:   watchdog: DOWN" in message.body


def test_the_opened_message_names_every_controller_and_every_reason() -> None:
    body = opened(_request(), INCIDENT, "us-west-2", NOW).body
    assert _lines(body, "Controllers:") == [
        "  ctl1  i-0aaaaaaaaaaaaaaa1  10.1.0.11  not active, slurmctld stopped, does not answer ping",
        "  ctl2  i-0aaaaaaaaaaaaaaa2  10.1.0.12  unreachable: Session Manager: TargetNotConnected",
    ]
    assert _lines(body, "What is wrong (every reason):") == [f"  - {reason}" for reason in BOTH_DOWN]


def test_the_opened_message_says_what_to_do_next() -> None:
    body = opened(_request(), INCIDENT, "us-west-2", NOW).body
    for line in (
        f"     ctl1: aws ssm start-session --region us-west-2 --target {TARGET}i-0aaaaaaaaaaaaaaa1",
        f"     ctl2: aws ssm start-session --region us-west-2 --target {TARGET}i-0aaaaaaaaaaaaaaa2",
        "     - each controller's slurmctld log (/var/log/slurm/slurmctld.log)",
        "     - the state directory (/fsx/slurm/state)",
        "  3. Check again once fixed: "
        "hyperpod-ha runbook start --cluster ml-cluster --region us-west-2 --follow",
        "     OpsItem: https://ops-item",
        "     Verification run: https://run",
    ):
        assert line in body.splitlines(), line


def test_run_command_controllers_are_reached_by_their_instance_id() -> None:
    evidence = {"ctl1": {**EVIDENCE["ctl1"], "target": "i-0aaaaaaaaaaaaaaa1"}}
    body = opened(_request(evidence=evidence), INCIDENT, "us-west-2", NOW).body
    assert "     ctl1: aws ssm start-session --region us-west-2 --target i-0aaaaaaaaaaaaaaa1" in body


def test_degraded_says_what_is_unhealthy_and_on_whom() -> None:
    problem = "slurmdbd does not answer from ctl1: no route"
    request = _request(
        verdict="DEGRADED", kind="DEGRADED", problem=problem, reasons=["ctl1 is active: ...", problem]
    )
    message = opened(request, INCIDENT, "us-west-2", NOW)
    assert message.subject == f"[hyperpod-ha] ml-cluster: DEGRADED: {problem} (sev 1)"
    assert ops_item_request(request)["Title"] == f"HyperPod cluster ml-cluster: DEGRADED: {problem}"
    assert "something the cluster needs" not in message.body
    assert ops_item_request(request)["Severity"] == "3"


def test_reasons_beyond_the_requests_bound_are_counted_not_dropped_silently() -> None:
    reasons = [f"reason {i}" for i in range(MAX_REASONS + 5)]
    body = opened(_request(reasons=reasons), INCIDENT, "us-west-2", NOW).body
    listed = _lines(body, "What is wrong (every reason):")
    assert listed[:-1] == [f"  - reason {i}" for i in range(MAX_REASONS)]
    assert listed[-1] == "  … 5 more (the run's history holds every one)"


def test_a_verification_error_says_the_error_and_keeps_its_verdict() -> None:
    request = _request(
        verdict="UNKNOWN",
        kind="verification-error",
        reasons=["verification could not complete"],
        evidence={},
        error={"Error": "States.Timeout", "Cause": "HealthCheckFunction timed out"},
    )
    message = opened(request, OpenedIncident("oi-1", True, "2", None, Links()), "us-west-2", NOW)
    assert (
        message.subject
        == "[hyperpod-ha] ml-cluster: the failover verification itself failed (UNKNOWN) (sev 2)"
    )
    assert "States.Timeout: HealthCheckFunction timed out" in message.body
    assert "Controllers: not known (no controller was checked)" in message.body
    assert message.attributes["verdict"] == "UNKNOWN"


def test_a_reminder_says_how_long_it_is_open_and_when_the_next_comes() -> None:
    incident = OpenedIncident("oi-1", False, "1", None, Links(), opened_at=NOW - 5400)
    message = reminder(_request(), incident, "us-west-2", NOW, 3600)
    check_form(message)
    assert (
        message.subject
        == "[hyperpod-ha] ml-cluster: still open for 1 h 30 min: DOWN: no Slurm controller is active (sev 1)"
    )
    assert message.attributes["event"] == "reminder"
    assert "open since 1 h 30 min ago (2026-12-01 08:30 UTC)" in message.body
    assert "at most every 1 h while it stays open" in message.body


def test_recovered_is_one_resolve_per_problem_with_its_dedup_key_and_severity() -> None:
    request = ResolveRequest.from_event(
        {"cluster": "ml-cluster", "verdict": "FAILED_OVER", "execution_id": EXECUTION, "evidence": EVIDENCE}
    )
    resolved = [
        ResolvedIncident("oi-2", "DEGRADED", "3", "https://x/oi-2", NOW - 600),
        ResolvedIncident("oi-1", "DOWN", "1", "https://x/oi-1", NOW - 7200),
    ]
    degraded, message = recovered(request, resolved, None, "us-west-2", NOW)
    check_form(message)
    check_form(degraded)
    assert message.subject == "[hyperpod-ha] ml-cluster: recovered (FAILED_OVER): DOWN resolved (sev 1)"
    assert (message.attributes["event"], message.attributes["dedup_key"]) == (
        "resolved",
        "hyperpod-ha:ml-cluster:DOWN",
    )
    assert degraded.attributes["dedup_key"] == "hyperpod-ha:ml-cluster:DEGRADED"
    assert degraded.attributes["severity"] == "3"
    assert "  - oi-1 DOWN (sev 1), open since 2 h ago (2026-12-01 08:00 UTC): https://x/oi-1" in message.body
    assert "oi-1" not in degraded.body
    assert "  ctl1  i-0aaaaaaaaaaaaaaa1  10.1.0.11" in message.body
    assert "aws ssm start-session" not in message.body  # nothing to diagnose


def test_verified_says_why_the_cluster_is_well() -> None:
    request = ResolveRequest.from_event(
        {
            "cluster": "ml-cluster",
            "verdict": "HEALTHY",
            "execution_id": EXECUTION,
            "reasons": ["ctl1 (configured primary) is active: writes the heartbeat"],
            "trigger": {"source": "sns", "id": "m-1", "time": "2026-12-01T09:59:30Z"},
        }
    )
    message = verified(request, "https://run", "us-west-2", NOW)
    check_form(message)
    assert message.attributes == {
        "cluster": "ml-cluster",
        "kind": "verified",
        "severity": "4",
        "event": "notice",
        "dedup_key": "hyperpod-ha:ml-cluster:verified",
        "level": "info",
        "verdict": "HEALTHY",
    }
    assert "  - ctl1 (configured primary) is active: writes the heartbeat" in message.body
    assert (
        "the controller status notification (SNS message m-1), 30 s ago (2026-12-01 09:59 UTC)"
        in message.body
    )


def test_a_resolve_request_survives_its_round_trip_through_json() -> None:
    event = {
        "cluster": "ml-cluster",
        "verdict": "HEALTHY",
        "execution_id": EXECUTION,
        "reasons": ["a"],
        "evidence": EVIDENCE,
        "trigger": {"source": "sns", "id": "m-1", "time": "2026-12-01T09:59:30.500Z"},
        "started_at": "2026-12-01T09:59:31.000Z",
        "run_reason": "slurmctld ON",
        "kinds": ["DOWN"],
    }
    request = ResolveRequest.from_event(event)
    assert ResolveRequest.from_event(request.to_event()) == request


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(max_size=300),
    reasons=st.lists(st.text(max_size=300), max_size=40),
    evidence=st.dictionaries(
        st.text(max_size=40),
        st.dictionaries(
            st.sampled_from(["instance_id", "address", "target", "status"]), st.text(max_size=60)
        ),
        max_size=20,
    ),
)
def test_any_request_gives_a_message_in_the_one_form(
    text: str, reasons: list[str], evidence: dict[str, Any]
) -> None:
    request = _request(
        reasons=reasons,
        evidence=evidence,
        problem=text,
        trigger={"source": text, "id": text[:256], "time": text},
        run_reason=text,
        verdict="DEGRADED",
        kind="DEGRADED",
    )
    for message in (
        opened(request, INCIDENT, "us-west-2", NOW),
        reminder(
            request, OpenedIncident("oi-1", False, "3", None, Links(), NOW - 7200), "us-west-2", NOW, 3600
        ),
    ):
        check_form(message)
        assert len(message.body.encode()) <= 256 * 1024
