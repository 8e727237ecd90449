"""HyperPodEventFunction's notices in the one form: many workers unhealthy (the window as a time people
read, not epoch seconds), the cluster Failed, an accounting database change reverted."""

from __future__ import annotations

from hyperpod_ha.ingestion import hyperpod_notices
from hyperpod_ha.ingestion.cluster_event_metadata import DatabaseConfiguration
from hyperpod_ha.ingestion.hyperpod_events import ClusterEvent, ClusterStateChange, NodeHealthEvent
from hyperpod_ha.topic_messages import check_form

NOW = 1_796_119_200.0  # 2026-12-01 10:00 UTC
ARN = "arn:aws:sagemaker:us-west-2:123456789012:cluster/abcd1234efgh"


def test_many_unhealthy_workers_read_as_a_window_people_read() -> None:
    event = NodeHealthEvent(
        "e-7", "ml-cluster", ARN, "i-0f1", "Unhealthy", "GPU XID error", "Replace", "2026-12-01T09:59:10Z"
    )
    message = hyperpod_notices.workers_unhealthy(event, 6, 1_796_118_600, 600, "us-west-2", NOW)
    check_form(message)
    assert message.subject == "[hyperpod-ha] ml-cluster: 6 worker nodes unhealthy within 10 min (sev 2)"
    assert message.attributes == {
        "cluster": "ml-cluster",
        "kind": "workers-unhealthy",
        "severity": "2",
        "event": "notice",
        "dedup_key": "hyperpod-ha:ml-cluster:workers-unhealthy",
        "level": "error",
    }
    assert "Window:     10 min from 10 min ago (2026-12-01 09:50 UTC)" in message.body
    assert "epoch" not in message.body
    assert "Latest:     i-0f1 (Unhealthy, repair action Replace)" in message.body
    assert "Event:      e-7, 50 s ago (2026-12-01 09:59 UTC)" in message.body
    assert "#/cluster-management/ml-cluster" in message.body


def test_a_failed_cluster() -> None:
    event = ClusterStateChange("e-8", "ml-cluster", ARN, "Failed", "quota exceeded", "2026-12-01T09:58:00Z")
    message = hyperpod_notices.cluster_status(event, "us-west-2", NOW)
    check_form(message)
    assert message.subject == "[hyperpod-ha] ml-cluster: cluster status Failed (sev 2)"
    assert message.attributes["kind"] == "cluster-status"
    assert "Failure: quota exceeded" in message.body


def test_an_accounting_database_change_reverted() -> None:
    event = ClusterEvent("e-9", "ml-cluster", ARN, "Warn", "Cluster", "db change", None, None, "")
    database = DatabaseConfiguration("Reverted", "check the endpoint", "timed out")
    message = hyperpod_notices.accounting_database_change(event, database, "reverted", "us-west-2", NOW)
    check_form(message)
    assert message.subject == "[hyperpod-ha] ml-cluster: accounting database change reverted (sev 4)"
    assert "Advisory: check the endpoint" in message.body
    assert "Event:    e-9 (level Warn)" in message.body
