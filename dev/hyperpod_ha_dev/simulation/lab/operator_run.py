"""Verification runs started as ``hyperpod-ha runbook start`` does, on the lab's embedded stack."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hyperpod_ha.runs.settings import RunSettings, VerificationRunsSettings
from hyperpod_ha.runs.verification_runs import VerificationRuns
from hyperpod_ha_dev.embedded.stack import EmbeddedStack


def operator_runs(stack: EmbeddedStack, settings: Mapping[str, Any]) -> VerificationRuns:
    """The runs of ``stack``'s workflow with ``settings`` (SettleSeconds, MaxAttempts,
    BackoffSeconds), as an operator starts them."""
    return VerificationRuns.from_settings(
        VerificationRunsSettings(
            stack.ref("StateTable"),
            str(stack.outputs["FailoverVerificationStateMachineArn"]),
            RunSettings.from_parameters(settings),
        )
    )
