"""Kept for its importers: convergence is now :mod:`hyperpod_ha.verdict.convergence`."""

from hyperpod_ha.verdict import (
    DEFAULT_SLURMCTLD_TIMEOUT,
    MAX_SLURMCTLD_TIMEOUT,
    MAX_WAIT_SECONDS,
    VERIFIED,
    ConvergenceInputError,
    Next,
    Step,
    configured_timeout,
    next_step,
    parse_time,
    trigger_time,
)

__all__ = [
    "DEFAULT_SLURMCTLD_TIMEOUT",
    "MAX_SLURMCTLD_TIMEOUT",
    "MAX_WAIT_SECONDS",
    "VERIFIED",
    "ConvergenceInputError",
    "Next",
    "Step",
    "configured_timeout",
    "next_step",
    "parse_time",
    "trigger_time",
]
