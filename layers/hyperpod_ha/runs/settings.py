"""The settings of verification runs: where a stack's runs start and what each run gets (parts
of the settings of every function that starts or releases a run)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Any

from hyperpod_ha.environment import Integer, Settings, Text
from hyperpod_ha.lease import DEFAULT_LEASE_SECONDS, LeaseSeconds


@dataclass(frozen=True)
class RunSettings(Settings):
    """Defaults handed to each run; the execution input can override them (runbook). The
    defaults are the template's."""

    settle_seconds: Annotated[int, Integer("SETTLE_SECONDS", 0, minimum=0)] = 0
    max_attempts: Annotated[int, Integer("MAX_ATTEMPTS", 30, minimum=1)] = 30
    backoff_seconds: Annotated[int, Integer("BACKOFF_SECONDS", 5, minimum=0)] = 5
    lease_seconds: LeaseSeconds = DEFAULT_LEASE_SECONDS
    dry_run: bool = False

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, Any], **overrides: Any) -> RunSettings:
        """From a stack's parameters or outputs (``SettleSeconds``, ...), the template's
        defaults where one is not given; ``overrides`` win."""
        given = cls(
            settle_seconds=int(parameters.get("SettleSeconds", cls.settle_seconds)),
            max_attempts=int(parameters.get("MaxAttempts", cls.max_attempts)),
            backoff_seconds=int(parameters.get("BackoffSeconds", cls.backoff_seconds)),
            lease_seconds=int(parameters.get("LeaseSeconds", cls.lease_seconds)),
        )
        return replace(given, **overrides)


@dataclass(frozen=True)
class VerificationRunsSettings(Settings):
    """Where a stack's runs start: the state table holding the lease, the workflow, and the
    settings each run gets."""

    state_table: Annotated[str, Text("STATE_TABLE")]
    state_machine_arn: Annotated[str, Text("STATE_MACHINE_ARN")]
    runs: RunSettings = RunSettings()
