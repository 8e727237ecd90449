"""The values of a verification run: what triggered it, the settings it runs with, and what
asking for one decided."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Self

from hyperpod_ha.environment import Environment, Settings, integer, text

Outcome = Literal["started", "joined", "duplicate"]


@dataclass(frozen=True)
class Trigger:
    """What asked for a verification: an SNS message, an EventBridge event, the watchdog or an
    operator. ``time`` is the trigger's own time (ISO 8601 UTC, or "" for the run's start): the
    run checks until SlurmctldTimeout plus a margin has passed since then."""

    source: Literal["sns", "eventbridge", "watchdog", "operator"]
    id: str
    summary: Mapping[str, Any] = field(default_factory=dict)
    time: str = ""

    @property
    def key(self) -> str:
        return f"{self.source}:{self.id}"


@dataclass(frozen=True)
class RunSettings(Settings):
    """Defaults handed to each run; the execution input can override them (runbook). The
    defaults are the template's."""

    settle_seconds: int = 0
    max_attempts: int = 30
    backoff_seconds: int = 5
    lease_seconds: int = 3600
    dry_run: bool = False

    @classmethod
    def read(cls, env: Environment) -> Self:
        return cls(
            settle_seconds=integer(env, "SETTLE_SECONDS", cls.settle_seconds, minimum=0),
            max_attempts=integer(env, "MAX_ATTEMPTS", cls.max_attempts, minimum=1),
            backoff_seconds=integer(env, "BACKOFF_SECONDS", cls.backoff_seconds, minimum=0),
            lease_seconds=integer(env, "LEASE_SECONDS", cls.lease_seconds, minimum=1),
        )

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

    state_table: str
    state_machine_arn: str
    runs: RunSettings = RunSettings()

    @classmethod
    def read(cls, env: Environment) -> Self:
        return cls(
            state_table=text(env, "STATE_TABLE"),
            state_machine_arn=text(env, "STATE_MACHINE_ARN"),
            runs=RunSettings.from_environment(env),
        )


@dataclass(frozen=True)
class RunDecision:
    outcome: Outcome
    execution_arn: str
    lease_id: str
