"""The command's plain output: the drill report in words, controllers named, every reason,
human times; samconfig's region and profile; the runbook's ending with the verdict's reasons."""

from __future__ import annotations

import io
import json
from typing import Any

from hyperpod_ha_cli.drill_text import render_drill_report
from hyperpod_ha_cli.execution_events import controller_label, exit_line
from hyperpod_ha_cli.following import StateView
from hyperpod_ha_cli.runbook import _ending, _show
from hyperpod_ha_cli.status import render

REPORT: dict[str, Any] = {
    "outcome": "completed",
    "cluster": "ml-cluster",
    "reasons": [],
    "dry_run": False,
    "from": "ctl1",
    "to": "ctl2",
    "from_controller": {"name": "ctl1", "instance_id": "i-0a1", "address": "10.214.0.11"},
    "to_controller": {"name": "ctl2", "instance_id": "i-0a2", "address": "10.214.0.12"},
    "takeover_seconds": 7.26,
    "verified_seconds": 9.01,
    "takeover_registrations": [],
    "verdict": "HEALTHY",
    "verdict_reasons": ["ctl1 (configured primary) is active", "ctl2: standby", "slurmdbd answers", "fourth"],
    "verified": True,
    "jobs_survived": True,
    "jobs": {"before": ["4"], "survived": ["4"], "lost": {}, "all_survived": True},
    "test_job": {"id": "100", "state": "COMPLETED", "ran": True, "seconds": 25.34},
    "hand_back": {"to": "ctl1", "takeover_seconds": 40.0, "verified_seconds": 46.44, "verified": True},
}


def test_the_drill_report_reads_as_words() -> None:
    text = "\n".join(render_drill_report(REPORT))
    assert "control: ctl1 (i-0a1, 10.214.0.11) -> ctl2 (i-0a2, 10.214.0.12)" in text
    assert "takeover to ctl2: active after 7.3 s, verified after 9 s" in text
    assert "test job 100: COMPLETED in 25.3 s" in text
    assert "hand-back to ctl1: verified after 46.4 s, active after 40 s" in text
    assert "jobs: 1 running before, 1 survived, lost: none" in text
    for reason in REPORT["verdict_reasons"]:  # every one, not three
        assert f"  - {reason}" in text
    assert "{" not in text  # no repr
    assert "None" not in text


def test_a_refused_drill_says_why_and_what_was_not_done() -> None:
    refused = {
        "outcome": "refused",
        "cluster": "ml-cluster",
        "reasons": ["the cluster is not HEALTHY now (DEGRADED): a; b; c; d"],
        "from": None,
        "to": None,
        "verified": None,
    }
    lines = render_drill_report(refused)
    assert lines[0] == "drill on ml-cluster: REFUSED"
    assert "  - the cluster is not HEALTHY now (DEGRADED): a; b; c; d" in lines
    assert {"takeover: not done", "test job: not run", "hand-back: not done", "jobs: not checked"} <= set(
        lines
    )


def test_the_drills_own_record_is_not_called_an_incident() -> None:
    recorded = render_drill_report({**REPORT, "ops_item_id": "oi-1", "incident": None})
    assert "drill record: OpsItem oi-1 (resolved)" in recorded
    assert not [line for line in recorded if line.startswith("incident:")]
    failed = render_drill_report({**REPORT, "ops_item_id": "oi-1", "incident": {"ops_item_id": "oi-2"}})
    assert "incident: oi-2 (the drill left the cluster not verified)" in failed


def test_a_controller_is_named_with_what_is_known() -> None:
    assert controller_label("ctl1", "i-1", "10.0.0.1") == "ctl1 (i-1, 10.0.0.1)"
    assert controller_label(None, "i-1", None) == "i-1"
    assert controller_label("ctl2") == "ctl2"


def test_a_probe_report_names_its_controller() -> None:
    line = exit_line(
        "Run the probe on the controller",
        {"instance_id": "i-1", "hostname": "ctl1", "private_ip": "10.0.0.1", "status": "CHECKED"},
    )
    assert line is not None
    assert (line.what, line.detail) == ("probe report", "ctl1 (i-1, 10.0.0.1): CHECKED")


def _event(kind: str, name: str, output: Any) -> dict[str, Any]:
    import datetime as dt

    return {
        "timestamp": dt.datetime(2026, 12, 1, 21, 0, 0),
        kind: {"name": name, "output": json.dumps(output)},
    }


def test_the_runbook_follows_with_controllers_and_ends_with_every_reason() -> None:
    reasons = [
        "no controller is active",
        "ctl1: slurmctld not running",
        "ctl2: slurmctld not running",
        "fourth",
    ]
    verdict = {"verdict": {"value": {"verdict": "DOWN", "next": "not-verified", "reasons": reasons}}}
    probe = {"instance_id": "i-2", "hostname": "ctl2", "private_ip": "10.0.0.2", "status": "CHECKED"}
    events = [
        _event("stateExitedEventDetails", "Run the probe on the controller", probe),
        _event("stateExitedEventDetails", "Decide the verdict", verdict),
    ]
    out = io.StringIO()
    last: dict[str, Any] = {}
    for event in events:
        _show(event, StateView(out, live=False), last)
    text = out.getvalue()
    assert "probe report:  ctl2 (i-2, 10.0.0.2): CHECKED" in text
    assert all(f"- {reason}" in text for reason in reasons)
    ending = _ending({"status": "FAILED", "error": "DOWN"}, events, last)
    assert (ending.verdict, ending.code, ending.reasons) == ("DOWN", 1, tuple(reasons))


def test_status_times_are_human_and_every_reason_shows() -> None:
    now = 1_796_160_000.0
    status = {
        "cluster": "ml-cluster",
        "last_verdict": {
            "verdict": "DOWN",
            "recorded_at": int(now - 185),
            "reasons": [f"reason {i}" for i in range(8)],
            "active_controller": None,
        },
        "in_progress": None,
        "open_incidents": [],
        "last_snapshot": {
            "kind": "backup",
            "id": "b-1",
            "status": "AVAILABLE",
            "recorded_at": int(now - 158323),
        },
        "last_rotation": None,
        "last_drill": None,
    }
    text = render(status, now=now)
    assert "last verdict: DOWN, 3 min 5 s ago (" in text
    assert all(f"  - reason {i}" in text for i in range(8))
    assert "last snapshot: backup b-1 AVAILABLE, 1 d 19 h ago (2026-11-" in text


def test_status_shows_a_run_waiting_for_maintenance() -> None:
    now = 1_796_160_000.0
    running = {
        "kind": "verification",
        "lease_holder": "sns:m-1",
        "execution_arn": "arn:aws:states:us-east-1:123456789012:execution:v:ml-cluster-1",
        "execution_link": "",
        "since": int(now - 600),
        "joined": 6,
        "maintenance": "maintenance in progress: cluster SystemUpdating (incident deferred until it ends)",
    }
    status = {"cluster": "ml-cluster", "last_verdict": None, "in_progress": running, "open_incidents": []}
    lines = render(status, now=now).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("in progress: verification since 10 min"))
    assert lines[at + 1] == (
        "  waiting for maintenance to end: maintenance in progress: cluster SystemUpdating "
        "(incident deferred until it ends)"
    )
    assert "waiting for maintenance" not in render(
        {**status, "in_progress": {**running, "maintenance": None}}, now=now
    )


def test_status_starts_with_a_controller_table_in_the_spirit_of_scontrol_ping() -> None:
    now = 1_796_160_000.0
    row = {
        "name": "ctl1",
        "position": 0,
        "instance_id": "i-0ctl1",
        "address": "10.1.0.11",
        "slurmctld": "not running",
        "active": False,
        "answers_ping": False,
        "writes_heartbeat": False,
        "slurmdbd_reachable": None,
        "heartbeat_age_seconds": None,
    }
    controllers = [
        row,
        {
            **row,
            "name": "ctl2",
            "position": 1,
            "instance_id": "i-0ctl2",
            "address": "10.1.0.12",
            "slurmctld": "running",
            "active": True,
            "answers_ping": True,
            "writes_heartbeat": True,
            "slurmdbd_reachable": True,
            "heartbeat_age_seconds": 4000,
        },
        {"name": "ctl3", "position": 2, "active": False, "answers_ping": True, "slurmctld": "running"},
    ]
    status = {"cluster": "ml-cluster", "controllers": controllers, "controllers_seen_at": int(now - 65)}
    lines = render(status, now=now).splitlines()
    assert lines[1] == "controllers, as the last verdict saw them 1 min 5 s ago (2026-12-01 21:18 UTC):"
    header, first, second, third = (line.split("  ") for line in lines[2:6])
    cells = [[cell.strip() for cell in line if cell.strip()] for line in (header, first, second, third)]
    assert cells[0] == [
        "CONTROLLER",
        "INSTANCE",
        "ADDRESS",
        "ROLE",
        "SLURMCTLD",
        "PING",
        "HEARTBEAT",
        "SLURMDBD",
    ]
    assert cells[1] == ["ctl1", "i-0ctl1", "10.1.0.11", "primary, down", "not running", "DOWN", "-", "-"]
    assert cells[2] == [
        "ctl2",
        "i-0ctl2",
        "10.1.0.12",
        "backup1, active",
        "running",
        "UP",
        "1 h 6 min ago (writer)",
        "UP",
    ]
    assert cells[3] == ["ctl3", "-", "-", "backup2, standby", "running", "UP", "-", "-"]
    # The columns line up: every row's ROLE starts where the header's does.
    assert (
        len(
            {
                line.index(role)
                for line, role in zip(lines[2:6], ("ROLE", "primary", "backup1", "backup2"), strict=True)
            }
        )
        == 1
    )
    assert "controllers: none recorded" in render({"cluster": "ml-cluster"}, now=now)


def test_status_says_an_unknown_redundancy_was_not_judged_and_that_no_restore_ran() -> None:
    from hyperpod_ha_cli.status import render

    verdict = {"verdict": "DOWN", "redundancy": "unknown", "standbys": [], "not_ready": {}, "reasons": []}
    text = render({"cluster": "ml-cluster", "last_verdict": verdict}, now=0.0)
    assert "redundancy unknown: not judged" in text
    assert "no ready standby" not in text
    assert "last restore: none recorded" in text
    none = render({"cluster": "ml-cluster", "last_verdict": {**verdict, "redundancy": "none"}}, now=0.0)
    assert "redundancy none: no ready standby" in none


def test_status_shows_the_watchdogs_early_warnings_and_each_controllers_figures() -> None:
    from hyperpod_ha_cli.status import render

    record = {
        "recorded_at": 940,
        "warnings": [
            {
                "kind": "accounting-at-risk",
                "controller": "ctl1",
                "headline": "accounting records will be lost in about 2 min (9000 of 10000 queued)",
                "codes": ["accounting-queue-growing", "accounting-queue-half-full"],
            }
        ],
        "figures": [
            {"controller": "ctl1", "role": "active", "server_threads": 3, "dbd_agent_queue": 9000},
            {"controller": "ctl2", "role": "standby", "round_trip_ms": 40},
        ],
    }
    lines = render({"cluster": "ml-cluster", "early_warnings": record}, now=1000.0).splitlines()
    at = lines.index("early warnings (1 min ago (1970-01-01 00:15 UTC)): 1")
    assert lines[at + 1 : at + 4] == [
        "  - accounting-at-risk on ctl1: accounting records will be lost in about 2 min (9000 of 10000 "
        "queued) [accounting-queue-growing, accounting-queue-half-full]",
        "  ctl1 (active): server threads 3, DBD agent queue 9000",
        "  ctl2 (standby): sdiag round trip 40 ms",
    ]
    quiet = render({"cluster": "ml-cluster"}, now=1000.0)
    assert "early warnings: none recorded (the watchdog has not ticked, or is off)" in quiet


def test_status_names_every_known_bad_release_the_controllers_run() -> None:
    from hyperpod_ha.slurm import applying
    from hyperpod_ha.status_records import advisories_record
    from hyperpod_ha_cli.status import render

    rows = [row.to_json() for row in applying({"ctl1": "24.11.0", "ctl2": "24.11.0"})]
    kept = advisories_record({"advisories": [*rows, "not a row", {"advisory": 7}]})
    verdict = {"verdict": "HEALTHY", "reasons": [], "advisories": kept}

    lines = render({"cluster": "ml-cluster", "last_verdict": verdict}, now=0.0).splitlines()

    assert "known-bad Slurm releases: 4" in lines
    assert (
        "  - Slurm 24.11.0: slurm-24.11.1-reconfigure-split-brain: crash and possible split brain if the "
        "backup controller handles an scontrol reconfigure while in control before the primary resumes "
        "operation (fixed in 24.11.1)"
    ) in lines
    assert kept[0]["controllers"] == ["ctl1", "ctl2"]
    without = {**verdict, "advisories": []}
    assert "known-bad" not in render({"cluster": "ml-cluster", "last_verdict": without})
