"""A known-bad Slurm release told once: a severity-4 notice per advisory and release, never a page."""

from __future__ import annotations

from typing import Any
from unittest import mock

import boto3
from botocore.exceptions import ClientError

from hyperpod_ha.incidents.advisory_notices import advisory_event_id, advisory_notice
from hyperpod_ha.silences import Silences
from hyperpod_ha.slurm.advisories import applying
from hyperpod_ha.status_records import advisories_record
from hyperpod_ha.topic_messages import check_form
from tests.unit.incidents.cases.incident_world import NOW, REGION, STATE_TABLE, World


def rows(**versions: str) -> list[dict[str, Any]]:
    """The advisory rows a verdict passes on for these releases, as IncidentFunction keeps them."""
    applied = [row.to_json() for row in applying(versions)]
    return advisories_record({"advisories": applied})


def test_the_lab_releases_name_the_september_advisory() -> None:
    (row,) = rows(ctl1="24.11.5", ctl2="24.11.5")
    assert row["advisory"] == "slurm-security-2026-09"
    assert row["releases"] == ["24.11.5"]


def test_the_notice_is_a_severity_4_notice_in_the_one_form() -> None:
    (row,) = rows(ctl1="24.11.5", ctl2="24.11.5")
    notice = advisory_notice("ml-cluster", REGION, row)
    check_form(notice)
    assert notice.attributes["severity"] == "4"
    assert notice.attributes["event"] == "notice"
    assert notice.attributes["kind"] == "slurm-advisory"
    assert notice.attributes["dedup_key"] == "hyperpod-ha:ml-cluster:slurm-advisory:slurm-security-2026-09"
    assert "24.11.5 on ctl1, ctl2" in notice.body
    assert all(source in notice.body for source in row["sources"])
    assert "Slurm 24.11.5: slurm-security-2026-09" in notice.subject


def test_each_advisory_is_told_once_per_release(world: World) -> None:
    incidents = world.incidents()
    first = rows(ctl1="24.11.5", ctl2="24.11.5")

    assert incidents.announce_advisories("ml-cluster", first) == ["slurm-security-2026-09"]
    assert incidents.announce_advisories("ml-cluster", first) == []
    # An upgrade to another affected release is told again.
    assert incidents.announce_advisories("ml-cluster", rows(ctl1="25.11.7")) == ["slurm-security-2026-09"]
    sent = world.messages()
    assert [m["MessageAttributes"]["kind"]["Value"] for m in sent] == ["slurm-advisory"] * 2
    assert advisory_event_id(first[0]) != advisory_event_id(rows(ctl1="25.11.7")[0])


def test_a_release_no_advisory_names_tells_nothing(world: World) -> None:
    assert rows(ctl1="25.11.8", ctl2="25.11.8") == []
    assert world.incidents().announce_advisories("ml-cluster", []) == []
    assert world.messages() == []


def test_a_silence_defers_the_notice_to_the_first_run_after_it(world: World) -> None:
    silences = Silences(boto3.client("dynamodb"), STATE_TABLE, lambda: NOW - 60)
    silences.start("ml-cluster", 3600, "kernel upgrade", "arn:aws:iam::123456789012:user/bob")
    found = rows(ctl1="24.11.5")

    assert world.incidents().announce_advisories("ml-cluster", found) == []
    assert world.messages() == []
    # The silence ended: nothing was marked while it lasted, so the notice goes out now.
    later = world.incidents(now=NOW + 3600)
    assert later.announce_advisories("ml-cluster", found) == ["slurm-security-2026-09"]


def test_a_failed_publish_is_logged_and_told_at_the_next_run(world: World) -> None:
    incidents = world.incidents()
    found = rows(ctl1="24.11.5")
    error = ClientError({"Error": {"Code": "InternalError", "Message": "down"}}, "Publish")

    with mock.patch("hyperpod_ha.topic_messages.publisher.publish", side_effect=error):
        assert incidents.announce_advisories("ml-cluster", found) == []
    assert incidents.announce_advisories("ml-cluster", found) == ["slurm-security-2026-09"]


def test_without_the_topic_nothing_is_told_or_marked(world: World) -> None:
    found = rows(ctl1="24.11.5")
    assert world.incidents(topic=False).announce_advisories("ml-cluster", found) == []
    assert world.incidents().announce_advisories("ml-cluster", found) == ["slurm-security-2026-09"]
