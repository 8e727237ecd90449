"""``hyperpod-ha runbook start``: an operator starts (or joins) the cluster's verification.

The state machine and the lease table come from the deployed stack's outputs; the run is
started through the same lease as the automatic triggers, so an operator never starts a
second run beside an active one. ``--follow`` shows the states as they run and ends with
the verdict: exit 0 verified, 1 not verified, 2 error.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

import boto3

from hyperpod_ha.runs.models import RunDecision, RunSettings, Trigger, VerificationRunsSettings
from hyperpod_ha.runs.verification_runs import VerificationRuns
from hyperpod_ha_dev.cli import project_root
from hyperpod_ha_dev.cli.samconfig import read_deploy_config

VERIFIED, NOT_VERIFIED, ERROR = 0, 1, 2
POLL_SECONDS = 2.0
VERDICT_ERRORS = frozenset({"DEGRADED", "SPLIT_BRAIN", "DOWN", "UNKNOWN"})


def deployed_stack(stack_name: str) -> dict[str, str]:
    """The stack's parameters and outputs (outputs win), from CloudFormation."""
    stack = boto3.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"][0]
    parameters = {p["ParameterKey"]: p["ParameterValue"] for p in stack.get("Parameters", [])}
    return {**parameters, **{o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}}


def start_run(
    outputs: Mapping[str, str], cluster: str, reason: str, dry_run: bool, settle_seconds: int
) -> RunDecision:
    runs = VerificationRuns.from_settings(
        VerificationRunsSettings(
            outputs["StateTableName"],
            outputs["FailoverVerificationStateMachineArn"],
            RunSettings.from_parameters(outputs, settle_seconds=settle_seconds, dry_run=dry_run),
        )
    )
    # An operator's run converges from now: the time it was asked for.
    now = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return runs.start_or_join(cluster, Trigger("operator", uuid.uuid4().hex, {"reason": reason}, now), reason)


@dataclass(frozen=True)
class Ending:
    status: str
    verdict: str | None
    error: str | None
    incident: str | None
    code: int


class StateView:
    """Plain lines, or in a terminal one line per state plus a live status line."""

    def __init__(self, out: TextIO, live: bool) -> None:
        self._out = out
        self._live = live
        self._started = time.monotonic()

    def state(self, timestamp: str, name: str, detail: str = "") -> None:
        self._clear()
        self._out.write(f"{timestamp}  {name}{'  ' + detail if detail else ''}\n")
        self._out.flush()

    def waiting(self, current: str) -> None:
        if self._live:
            self._clear()
            self._out.write(f"  ... {current} ({time.monotonic() - self._started:.0f} s)")
            self._out.flush()

    def _clear(self) -> None:
        if self._live:
            self._out.write("\r\033[K")


def follow(execution_arn: str, view: StateView, sleep: Callable[[float], None] = time.sleep) -> Ending:
    sfn = boto3.client("stepfunctions")
    seen = 0
    current = "starting"
    while True:
        # The status first: once it is final, the history read after it is complete.
        described = sfn.describe_execution(executionArn=execution_arn)
        events = _history(sfn, execution_arn)
        for event in events[seen:]:
            current = _show(event, view) or current
        seen = len(events)
        if described["status"] != "RUNNING":
            return _ending(described, events)
        view.waiting(current)
        sleep(POLL_SECONDS)


def _show(event: dict[str, Any], view: StateView) -> str | None:
    """Show one history event if it matters to an operator; the state it entered, if any."""
    at = event["timestamp"].strftime("%H:%M:%S")
    entered = event.get("stateEnteredEventDetails")
    if entered:
        view.state(at, entered["name"])
        return str(entered["name"])
    for key in ("taskFailedEventDetails", "lambdaFunctionFailedEventDetails", "executionFailedEventDetails"):
        failed = event.get(key)
        if failed:
            view.state(at, "  failed:", str(failed.get("error", "")))
    return None


def _history(sfn: Any, execution_arn: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for page in sfn.get_paginator("get_execution_history").paginate(executionArn=execution_arn):
        events.extend(page["events"])
    return events


def _ending(described: Mapping[str, Any], events: list[dict[str, Any]]) -> Ending:
    incident = _incident(events)
    status = described["status"]
    if status == "SUCCEEDED":
        output = json.loads(described.get("output") or "{}")
        verdict = output.get("verdict", {}).get("value", {}).get("verdict")
        return Ending(status, verdict, None, incident, VERIFIED)
    error = described.get("error")
    if status == "FAILED" and error in VERDICT_ERRORS:
        return Ending(status, error, None, incident, NOT_VERIFIED)
    return Ending(status, None, error or status, incident, ERROR)


def _incident(events: list[dict[str, Any]]) -> str | None:
    for event in reversed(events):
        exited = event.get("stateExitedEventDetails")
        if exited and exited["name"] in ("Open an incident", "Report that verification could not complete"):
            incident = json.loads(exited.get("output") or "{}").get("incident", {}).get("value", {})
            link: str | None = incident.get("links", {}).get("ops_item") or incident.get("ops_item_id")
            return link
    return None


def run_runbook_start(args: argparse.Namespace) -> int:
    root = project_root()
    stack_name = args.stack_name or read_deploy_config(root).stack_name
    try:
        decision = start_run(deployed_stack(stack_name), args.cluster, args.reason, args.dry_run, args.settle)
    except Exception as error:
        print(f"hyperpod-ha: could not start the verification: {error}", file=sys.stderr)
        return ERROR
    verb = {"started": "started", "joined": "joined the running", "duplicate": "found the running"}[
        decision.outcome
    ]
    print(f"{verb} verification {decision.execution_arn}")
    region = decision.execution_arn.split(":")[3]
    print(
        f"console: https://{region}.console.aws.amazon.com/states/home?region={region}#/v2/executions/details/{decision.execution_arn}"
    )
    if not args.follow:
        return VERIFIED
    ending = follow(decision.execution_arn, StateView(sys.stdout, sys.stdout.isatty()))
    print(
        f"\nresult: {ending.status}  verdict: {ending.verdict or '-'}"
        + (f"  error: {ending.error}" if ending.error else "")
    )
    if ending.incident:
        print(f"incident: {ending.incident}")
    return ending.code
