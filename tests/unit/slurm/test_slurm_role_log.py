"""slurmctld's log: the role lines of every captured log."""

from __future__ import annotations

import pytest

from hyperpod_ha.slurm import (
    parse_role_log,
)
from tests.unit.slurm.cases.captures import capture


@pytest.mark.parametrize(
    ("name", "last", "events"),
    [
        ("slurmctld_log_ctl1_primary.txt", "primary", ["starting", "primary"]),
        ("slurmctld_log_ctl2_standby.txt", "standby", ["starting", "standby"]),
        ("slurmctld_log_ctl2_takeover.txt", "primary", ["taking_over", "stopping", "primary"]),
        ("slurmctld_log_ctl2_takeover_04b.txt", "primary", ["taking_over", "stopping", "primary"]),
        ("slurmctld_log_ctl1_restart.txt", "primary", ["starting", "primary"]),
        ("slurmctld_log_ctl2_control_back.txt", "standby", ["stopping", "standby"]),
        ("slurmctld_log_ctl1_takeover_shutdown.txt", "stopping", ["stopping"]),
        ("slurmctld_log_ctl2_takeover_requested.txt", "primary", ["taking_over", "stopping", "primary"]),
        ("slurmctld_log_ctl1_partitioned.txt", None, []),
        ("slurmctld_log_ctl2_partitioned.txt", None, []),
    ],
)
def test_role_lines_of_every_captured_log(name: str, last: str | None, events: list[str]) -> None:
    log = parse_role_log(
        "now_local=2026-11-29T23:40:00\nsource=file:/var/log/slurmctld.log\n" + capture(name)
    )
    assert [line.event for line in log.lines] == events
    assert (log.last.event if log.last else None) == last
    assert log.source == "file:/var/log/slurmctld.log"


def test_role_line_age_and_journal_lines() -> None:
    log = parse_role_log(
        "now_local=2026-11-29T23:30:00\nsource=journal:slurmctld\n"
        "2026-11-29T23:29:53+0000 ctl1 slurmctld[7841]: Running as primary controller\n"
    )
    assert log.last is not None
    assert log.last.event == "primary"
    assert log.age_seconds(log.last) == 7
