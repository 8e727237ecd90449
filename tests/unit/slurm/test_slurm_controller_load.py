"""sdiag's figures and MaxDBDMsgs (hyperpod_ha.slurm.controller_load)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hyperpod_ha.slurm import DBD_MSGS_FLOOR, dbd_message_limit, parse_sdiag
from tests.unit.slurm.cases.sdiag import SDIAG


def test_every_figure_of_sdiag() -> None:
    load = parse_sdiag(SDIAG)
    assert (load.sampled_at, load.since) == (1796557202, 1796515200)
    assert (load.server_threads, load.agent_queue, load.agent_count, load.agent_threads) == (37, 4, 2, 6)
    assert load.dbd_agent_queue == 5120
    assert (load.jobs_pending, load.jobs_running) == (20, 10)
    assert (load.main_cycle_last_us, load.main_cycle_mean_us, load.main_cycle_max_us) == (2300, 1800, 91000)
    assert (load.backfill_cycle_last_us, load.backfill_cycle_mean_us) == (45000, 30000)
    assert [(r.name, r.count, r.total_us) for r in load.rpc_types] == [
        ("REQUEST_JOB_INFO", 5000, 4500000),
        ("REQUEST_PARTITION_INFO", 100, 12000),
        ("REQUEST_PING", 50, 2000),
    ]
    assert load.rpc_types[0].average_us == 900
    # A user name longer than sdiag's column runs into its uid: still read.
    assert [r.name for r in load.rpc_users] == ["root", "a-very-long-user-name-over-16"]


def test_the_probes_filter_keeps_what_the_parser_reads() -> None:
    script = Path("layers/hyperpod_ha/probe/controller_probe.sh").read_text()
    start = script.index("SDIAG_FILTER='") + len("SDIAG_FILTER='")
    program = script[start : script.index("'\n", start)]
    kept = subprocess.run(["awk", program], input=SDIAG, capture_output=True, text=True, check=True).stdout
    assert "Pending RPC statistics" not in kept
    assert "End of job queue" not in kept
    assert len(kept) < len(SDIAG)
    assert parse_sdiag(kept) == parse_sdiag(SDIAG)


def test_rows_are_bounded() -> None:
    rows = "".join(f"\tREQUEST_{i} ( {i}) count:1 ave_time:1 total_time:1\n" for i in range(100))
    load = parse_sdiag(f"Remote Procedure Call statistics by message type\n{rows}")
    assert len(load.rpc_types) == 24


@pytest.mark.parametrize(
    "text",
    [
        "",
        "slurm_get_statistics: Unable to contact slurm controller (connect failure)",
        "Server thread count:  x\nDBD Agent queue size: -\n" + "(" * 10_000,
        "Remote Procedure Call statistics by message type\n\tREQUEST (1) count:1 ave_time:1\n",
    ],
)
def test_anything_else_is_no_figure(text: str) -> None:
    load = parse_sdiag(text)
    assert load.empty
    assert load.rpc_types == ()


@pytest.mark.parametrize(
    ("config", "nodes", "limit"),
    [
        ("MaxDBDMsgs              = 20008\nMaxJobCount = 10000", 2, 20008),
        # Slurm refuses less than its floor (read_config.c): the running value is at least that.
        ("MaxDBDMsgs = 5", None, DBD_MSGS_FLOOR),
        ("MaxDBDMsgs = 0\nMaxJobCount = 10000", 4, 20016),  # 0: slurmctld's default
        ("MaxJobCount = 1000", 4, DBD_MSGS_FLOOR),
        ("MaxJobCount = 1000", None, None),  # the default needs the node count
        ("SlurmctldTimeout = 10 sec", 3, None),
    ],
)
def test_the_running_max_dbd_msgs(config: str, nodes: int | None, limit: int | None) -> None:
    assert dbd_message_limit(config, nodes) == limit


def test_sdiag_of_the_labs_24_11() -> None:
    """The real output (sdiag -t on the lab's active controller, 24.11.5), whole and filtered."""
    from tests.unit.slurm.cases.captures import capture

    text = capture("sdiag_24_11.txt")
    load = parse_sdiag(text)
    assert (load.server_threads, load.agent_queue, load.dbd_agent_queue) == (1, 0, 0)
    assert load.sampled_at is not None
    assert load.since is not None
    assert load.sampled_at > load.since
    assert load.rpc_types[0].name == "REQUEST_CONTROL_STATUS"
    assert [row.name for row in load.rpc_users] == ["root"]
    assert load.main_cycle_last_us is not None
    script = Path("layers/hyperpod_ha/probe/controller_probe.sh").read_text()
    start = script.index("SDIAG_FILTER='") + len("SDIAG_FILTER='")
    program = script[start : script.index("'\n", start)]
    kept = subprocess.run(["awk", program], input=text, capture_output=True, text=True, check=True).stdout
    assert parse_sdiag(kept) == load
