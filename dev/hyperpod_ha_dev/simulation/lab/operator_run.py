"""Verification runs started as ``hyperpod-ha runbook start`` does, on the lab's embedded stack."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import boto3

from hyperpod_ha.verification_runs import RunSettings, VerificationRuns
from hyperpod_ha_dev.embedded.stack import EmbeddedStack


def operator_runs(stack: EmbeddedStack, settings: Mapping[str, Any]) -> VerificationRuns:
    """The runs of ``stack``'s workflow with ``settings`` (SettleSeconds, MaxAttempts,
    BackoffSeconds), as an operator starts them."""
    return VerificationRuns(
        boto3.client("dynamodb"),
        boto3.client("stepfunctions"),
        stack.ref("StateTable"),
        str(stack.outputs["FailoverVerificationStateMachineArn"]),
        RunSettings(
            settle_seconds=int(settings["SettleSeconds"]),
            max_attempts=int(settings["MaxAttempts"]),
            backoff_seconds=int(settings["BackoffSeconds"]),
            lease_seconds=3600,
        ),
    )
