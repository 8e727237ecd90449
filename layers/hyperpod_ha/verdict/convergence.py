"""Whether a run checks again: a failover in progress must not be reported as a failure too early.

The first check runs at once: the backup's "Slurm Controller is ON" message is published once
it already runs as primary. A verdict other than HEALTHY or FAILED_OVER may still be a failover
in progress: a backup takes over only after SlurmctldTimeout without an answer (plus its next
poll and its start-up), and a restarted controller takes control back within seconds. So such a
verdict is checked again, with short growing waits, until the cluster's own SlurmctldTimeout
plus a margin has passed since the trigger's own time; the verdict seen then is final.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Final

from hyperpod_ha.verdict.models import DEFAULT_SLURMCTLD_TIMEOUT, VERIFIED, ConvergenceInputError, NextStep

# Waits double from backoff_seconds up to this (or backoff_seconds, if larger).
MAX_WAIT_SECONDS: Final = 30
MAX_SLURMCTLD_TIMEOUT: Final = 86_400


def parse_time(text: str, what: str) -> dt.datetime:
    """An ISO 8601 time (``Z`` accepted; no zone means UTC)."""
    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        raise ConvergenceInputError(f"{what} {str(text)[:40]!r} is not an ISO 8601 time") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=dt.UTC)


def next_step(
    verdict: str,
    *,
    attempt: int,
    max_attempts: int,
    started_at: str,
    trigger_at: str,
    slurmctld_timeout: int | None,
    margin_seconds: float,
    deadline_seconds: float,
    backoff_seconds: float,
    now: dt.datetime,
) -> NextStep:
    timeout = DEFAULT_SLURMCTLD_TIMEOUT if slurmctld_timeout is None else slurmctld_timeout
    if not 0 < timeout <= MAX_SLURMCTLD_TIMEOUT:
        raise ConvergenceInputError(f"slurmctld_timeout {timeout} is outside 1-{MAX_SLURMCTLD_TIMEOUT}")
    if verdict in VERIFIED:
        return NextStep("verified", 0, None, timeout)
    if attempt < 1 or max_attempts < 1:
        raise ConvergenceInputError("attempt and max_attempts must be at least 1")
    if margin_seconds < 0 or backoff_seconds < 0 or deadline_seconds <= 0:
        raise ConvergenceInputError("margin and backoff must not be negative, the deadline positive")
    started = parse_time(started_at, "started_at")
    # A trigger stamped after the run began (clock skew) counts from the run's start.
    base = min(parse_time(trigger_at, "trigger time"), started) if trigger_at else started
    converged_by = base + dt.timedelta(seconds=timeout + margin_seconds)
    left = (converged_by - now).total_seconds()
    if attempt >= max_attempts or left <= 0:
        return NextStep("not-verified", 0, converged_by, timeout)
    # Short waits first (a takeover may be seconds away), never past the convergence time.
    grown = backoff_seconds * 2 ** min(attempt - 1, 16)
    wait = math.ceil(min(grown, max(backoff_seconds, MAX_WAIT_SECONDS), left))
    if now + dt.timedelta(seconds=wait) >= started + dt.timedelta(seconds=deadline_seconds):
        return NextStep("not-verified", 0, converged_by, timeout)
    return NextStep("check-again", wait, converged_by, timeout)
