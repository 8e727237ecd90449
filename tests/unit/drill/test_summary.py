"""The drill's message: the one form, its controllers by name, instance id and address, its
figures as durations people read, every reason."""

from __future__ import annotations

from typing import Any

from hyperpod_ha.drill.summary import summary
from hyperpod_ha.topic_messages import check_form

NOW = 1_796_119_200.0  # 2026-12-01 10:00 UTC


def _report(**changes: Any) -> dict[str, Any]:
    report: dict[str, Any] = {
        "outcome": "completed",
        "cluster": "ml-cluster",
        "reasons": [],
        "dry_run": False,
        "from": "ctl1",
        "to": "ctl2",
        "from_controller": {"name": "ctl1", "instance_id": "i-01", "address": "10.1.0.11", "target": "t1"},
        "to_controller": {"name": "ctl2", "instance_id": "i-02", "address": "10.1.0.12", "target": "t2"},
        "takeover_seconds": 12.4,
        "verified_seconds": 95,
        "verdict": "FAILED_OVER",
        "verdict_reasons": ["ctl2 (SlurmctldHost[1]) took over from ctl1"],
        "verified": True,
        "jobs": {"before": ["101", "102"], "survived": ["101", "102"], "lost": []},
        "test_job": {"id": "103", "state": "COMPLETED", "ran": True, "seconds": 4.2},
        "execution_id": "arn:aws:states:us-west-2:123456789012:execution:drill:d-1",
        "execution_link": "https://run",
        "started_at": NOW - 180,
        "incident": None,
    }
    report.update(changes)
    return report


def test_a_completed_drill() -> None:
    message = summary(_report(), "us-west-2", NOW)
    check_form(message)
    assert message.subject == "[hyperpod-ha] ml-cluster: failover drill completed: ctl1 -> ctl2 (sev 4)"
    assert message.attributes == {
        "cluster": "ml-cluster",
        "kind": "drill",
        "severity": "4",
        "event": "notice",
        "dedup_key": "hyperpod-ha:ml-cluster:drill",
        "level": "info",
        "verdict": "FAILED_OVER",
    }
    body = message.body
    assert "  ctl1  i-01  10.1.0.11  from (configured primary)" in body
    assert "  ctl2  i-02  10.1.0.12  to" in body
    assert "  Takeover: ctl2 active after 12.4 s, verified FAILED_OVER after 1 min 35 s." in body
    assert "  Test job 103: COMPLETED (ran in 4.2 s)." in body
    assert "Started:       3 min ago (2026-12-01 09:57 UTC), by an operator's drill request" in body
    assert "Final verdict: FAILED_OVER (verified)" in body
    assert "aws ssm start-session" not in body
    assert "{'id'" not in body  # no Python repr


def test_a_failed_drill_lists_every_reason_and_how_to_look() -> None:
    reasons = [f"reason {i}" for i in range(9)]
    message = summary(_report(outcome="failed", reasons=reasons, verified=False), "us-west-2", NOW)
    assert message.attributes["severity"] == "3"
    for reason in reasons:
        assert f"  - {reason}" in message.body
    assert "ctl1: aws ssm start-session --region us-west-2 --target i-01" in message.body
    assert "Final verdict: FAILED_OVER (NOT verified)" in message.body
