"""The report as JSON: read back with its types checked and its size bounded, whatever arrives."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperpod_ha.commands import TargetUnreachable
from hyperpod_ha.controllers.check import check_controller, report_from_result
from hyperpod_ha.controllers.decoding import LIST_LIMIT
from hyperpod_ha.controllers.errors import ReportRejected
from hyperpod_ha.controllers.models import REPORT_JSON_LIMIT, ControllerReport, ReportStatus
from hyperpod_ha.slurm import TEXT_LIMIT
from tests.fakes.canned_runner import CannedRunner
from tests.unit.controllers.cases.probe_outputs import (
    NODE,
    primary_sections,
    probe_text,
    result,
    section,
)

# --- the report as JSON -------------------------------------------------------------------


def test_report_json_round_trip() -> None:
    report = report_from_result(NODE, result(probe_text()))
    data = json.loads(json.dumps(report.to_json()))
    assert data["status"] == "CHECKED"
    assert ControllerReport.from_json(data) == report
    unreachable = check_controller(
        NODE, CannedRunner(error=TargetUnreachable("gone")), document="d", deadline_seconds=1
    )
    assert ControllerReport.from_json(json.loads(json.dumps(unreachable.to_json()))) == unreachable


@pytest.mark.parametrize(
    "data",
    [
        "report",
        {"status": "CHECKED"},
        {"instance_id": "i-1", "status": "FINE"},
        {"instance_id": "i-1", "status": "CHECKED", "exit_code": "0"},
        {"instance_id": "i-1", "status": "CHECKED", "exit_code": True},
        {"instance_id": "i-1", "status": "CHECKED", "ping": {"lines": [{"host": "a"}]}},
        {"instance_id": "i-1", "status": "CHECKED", "notes": "x"},
        {"instance_id": 5, "status": "CHECKED"},
    ],
)
def test_report_from_json_rejects(data: object) -> None:
    with pytest.raises(ReportRejected):
        ControllerReport.from_json(data)


def test_report_json_is_bounded() -> None:
    """Every text cut to TEXT_LIMIT, every list to LIST_LIMIT: the JSON stays under REPORT_JSON_LIMIT."""
    long = "x" * 5000
    huge = {
        "instance_id": long,
        "status": "CHECKED",
        "group": long,
        "node_status": long,
        "hostname": long,
        "private_ip": long,
        "target": long,
        "reason": long,
        "transport": long,
        "node": {"hostname": long, "addresses": [long] * 100},
        "config": {
            "source": long,
            "cluster_name": long,
            "controllers": [{"index": i, "name": long, "address": long} for i in range(100)],
            "state_save_location": long,
            "log_file": long,
            "version": long,
            "error": long,
        },
        "ping": {"lines": [{"host": long, "label": "primary", "responding": True}] * 100, "error": long},
        "slurmctld": {"pids": list(range(100)), "systemctl": long, "process_state": long},
        "slurmdbd": {"pids": list(range(100)), "systemctl": long, "process_state": long},
        "role": {"logged": long, "line": long, "source": long, "error": long},
        "heartbeat": {"path": long, "error": long},
        "state_save": {
            "path": long,
            "mount_target": long,
            "fstype": long,
            "write_error": long,
            "error": long,
        },
        "dbd": {"registered_host": long, "error": long},
        "scheduler": {"node_states": [{"state": long, "count": 1}] * 100, "error": long},
        "failover": {
            **dict.fromkeys(("version", "conf_path", "conf_resolved", "conf_fstype", "conf_source"), long),
            **dict.fromkeys(("conf_sha256", "state_save_location", "error"), long),
            "controllers": [{"index": i, "name": long, "address": long} for i in range(100)],
            **{
                slot: {"configured": True, "path": long, "state": long}
                for slot in ("on_prog", "off_prog", "running_on_prog", "running_off_prog")
            },
        },
        "notes": [long] * 100,
    }
    report = ControllerReport.from_json(huge)
    assert len(report.notes) == LIST_LIMIT
    assert len(report.reason or "") == TEXT_LIMIT
    assert len(json.dumps(report.to_json())) <= REPORT_JSON_LIMIT


@settings(max_examples=200)
@given(st.text(), st.one_of(st.none(), st.integers(-1, 255)))
def test_any_output_gives_a_report(stdout: str, exit_code: int | None) -> None:
    report = report_from_result(NODE, result(stdout, exit_code=exit_code))
    assert report.status in (ReportStatus.CHECKED, ReportStatus.PROBE_FAILED)
    assert len(json.dumps(report.to_json())) <= REPORT_JSON_LIMIT


section_names = st.sampled_from(sorted(primary_sections()))


# No deadline: a time limit is bench/'s to check, and with every section (17) an example on a
# loaded machine ran past Hypothesis's 200 ms and failed as flaky.
@settings(max_examples=200, deadline=None)
@given(st.dictionaries(section_names, st.tuples(st.text(max_size=200), st.integers(0, 140), st.booleans())))
def test_any_section_content_gives_a_report(changes: dict[str, tuple[str, int, bool]]) -> None:
    sections = {
        name: section(name, text.replace("@@hyperpod-ha", "@@"), rc, timed_out=to)
        for name, (text, rc, to) in changes.items()
    }
    report = report_from_result(NODE, result(probe_text(**sections)))
    assert report.status is ReportStatus.CHECKED
    assert ControllerReport.from_json(json.loads(json.dumps(report.to_json()))) == report
