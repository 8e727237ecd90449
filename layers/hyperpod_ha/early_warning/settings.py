"""The warnings' thresholds: the stack's parameters (template.yaml), read by WatchdogFunction.

Each figure past its threshold on the active controller counts; ``controller-overloaded`` opens
once that has lasted ``window_seconds`` (a burst of ``squeue`` is not an overload).
``accounting-at-risk`` opens at the first check that finds the DBD agent queue growing while
slurmdbd or its database is away and either records would be dropped within
``horizon_seconds`` at the rate seen, or the queue is half full (where slurmctld itself starts
logging "agent queue filling"). Why each default: docs/operations.md."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Final

from hyperpod_ha.environment import Integer, Settings

# Defaults and bounds (template.yaml's parameters; a test keeps them equal).
SERVER_THREADS: Final = 64  # a quarter of slurmctld's 256 (MAX_SERVER_THREADS)
MAX_SERVER_THREADS: Final = 256
AGENT_QUEUE: Final = 1000
MAX_AGENT_QUEUE: Final = 1_000_000
RPC_AVERAGE_MS: Final = 1000
ROUND_TRIP_MS: Final = 5000  # half of MessageTimeout's default (10 s): clients start to time out
MAX_MILLISECONDS: Final = 60_000
WINDOW_MINUTES: Final = 10  # two ticks at the watchdog's default rate
HORIZON_MINUTES: Final = 60
MAX_MINUTES: Final = 1440


@dataclass(frozen=True)
class WarningThresholds(Settings):
    server_threads: Annotated[
        int, Integer("OVERLOAD_SERVER_THREADS", SERVER_THREADS, minimum=2, maximum=MAX_SERVER_THREADS)
    ] = SERVER_THREADS
    agent_queue: Annotated[
        int, Integer("OVERLOAD_AGENT_QUEUE", AGENT_QUEUE, minimum=1, maximum=MAX_AGENT_QUEUE)
    ] = AGENT_QUEUE
    rpc_average_ms: Annotated[
        int, Integer("OVERLOAD_RPC_AVERAGE_MS", RPC_AVERAGE_MS, minimum=1, maximum=MAX_MILLISECONDS)
    ] = RPC_AVERAGE_MS
    round_trip_ms: Annotated[
        int, Integer("OVERLOAD_ROUND_TRIP_MS", ROUND_TRIP_MS, minimum=100, maximum=MAX_MILLISECONDS)
    ] = ROUND_TRIP_MS
    # Read in minutes, kept in seconds.
    window_seconds: Annotated[
        int, Integer("OVERLOAD_WINDOW_MINUTES", WINDOW_MINUTES, minimum=0, maximum=MAX_MINUTES, scale=60)
    ] = WINDOW_MINUTES * 60
    horizon_seconds: Annotated[
        int,
        Integer("ACCOUNTING_RISK_HORIZON_MINUTES", HORIZON_MINUTES, minimum=1, maximum=MAX_MINUTES, scale=60),
    ] = HORIZON_MINUTES * 60
