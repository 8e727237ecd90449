"""sdiag's text as src/sdiag/sdiag.c prints it (``sdiag -t``: RPC rows by total time, the RPC
queue on), for the tests of what reads it."""

from __future__ import annotations

# sdiag.c's row formats.
_TYPE_ROW = (
    "\t%-40s(%5u) count:%-6u ave_time:%-6u total_time:%-12u queued:%-6u cycle_last:%-6u "
    "cycle_max:%-6u dropped:%u"
)
_USER_ROW = "\t%-16s(%8u) count:%-6u ave_time:%-6u total_time:%u"


def type_row(name: str, number: int, count: int, total_us: int) -> str:
    return _TYPE_ROW % (name, number, count, total_us // max(count, 1), total_us, 0, 0, 3, 0)


def user_row(name: str, uid: int, count: int, total_us: int) -> str:
    return _USER_ROW % (name, uid, count, total_us // max(count, 1), total_us)


def sdiag_text(
    *,
    threads: int = 37,
    dbd_queue: int = 5120,
    sampled_at: int = 1796557202,
    types: tuple[tuple[str, int, int, int], ...] = (
        ("REQUEST_JOB_INFO", 2003, 5000, 4500000),
        ("REQUEST_PARTITION_INFO", 2009, 100, 12000),
        ("REQUEST_PING", 1008, 50, 2000),
    ),
    users: tuple[tuple[str, int, int, int], ...] = (
        ("root", 0, 150, 14000),
        ("a-very-long-user-name-over-16", 1001, 5000, 4500000),
    ),
) -> str:
    rows = "\n".join(type_row(*row) for row in types)
    by_user = "\n".join(user_row(*row) for row in users)
    return f"""\
*******************************************************
sdiag output at Sun Dec 06 11:40:02 2026 ({sampled_at})
Data since      Sun Dec 06 00:00:00 2026 (1796515200)
*******************************************************
Server thread count:  {threads}
RPC queue enabled:    1
Agent queue size:     4
Agent count:          2
Agent thread count:   6
DBD Agent queue size: {dbd_queue}

Jobs submitted: 120
Jobs started:   100
Jobs completed: 90
Jobs canceled:  1
Jobs failed:    0

Job states ts:  Sun Dec 06 11:40:00 2026 (1796557200)
Jobs pending:   20
Jobs running:   10

Main schedule statistics (microseconds):
\tLast cycle:   2300
\tMax cycle:    91000
\tTotal cycles: 1200
\tMean cycle:   1800
\tMean depth cycle:  3
\tCycles per minute: 1
\tLast queue length: 20

Main scheduler exit:
\tEnd of job queue:1200

Backfilling stats
\tTotal backfilled jobs (since last slurm start): 3
\tTotal cycles: 40
\tLast cycle when: Sun Dec 06 11:39:30 2026 (1796557170)
\tLast cycle: 45000
\tMax cycle:  120000
\tMean cycle: 30000
\tLast depth cycle: 20

Backfill exit
\tEnd of job queue:40

Latency for 1000 calls to gettimeofday(): 18 microseconds

Remote Procedure Call statistics by message type
{rows}

Remote Procedure Call statistics by user
{by_user}

Pending RPC statistics
\tREQUEST_JOB_INFO                        ( 2003) count:3
"""


SDIAG = sdiag_text()
