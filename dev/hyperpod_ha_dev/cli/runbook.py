"""``hyperpod-ha runbook start``: an operator starts (or joins) the cluster's verification.

The state machine and the lease table come from the deployed stack's outputs; the run is
started through the same lease as the automatic triggers, so an operator never starts a
second run beside an active one. ``--follow`` shows the states as they run (each probe's
controller by name, instance id and address; each verdict with every reason) and ends with the
verdict and its reasons: exit 0 verified, 1 not verified, 2 error (also when the run cannot
start: no stack, no region, no credentials).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hyperpod_ha.runs.models import RunDecision
from hyperpod_ha.runs.settings import RunSettings, VerificationRunsSettings
from hyperpod_ha.runs.verification_runs import VerificationRuns
from hyperpod_ha.trigger import Trigger
from hyperpod_ha_dev.cli import project_root, result_stream
from hyperpod_ha_dev.cli.aws import use_deployed_account
from hyperpod_ha_dev.cli.cluster_stack import deployed_stack
from hyperpod_ha_dev.cli.errors import CommandError
from hyperpod_ha_dev.cli.following import StateView, follow_execution
from hyperpod_ha_dev.cli.samconfig import read_deploy_config
from hyperpod_ha_dev.cli.text import reason_lines
from hyperpod_ha_dev.execution_events import exit_line

VERIFIED, NOT_VERIFIED, ERROR = 0, 1, 2
VERDICT_ERRORS = frozenset({"DEGRADED", "SPLIT_BRAIN", "DOWN", "UNKNOWN"})


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
    reasons: tuple[str, ...] = ()
    active_controller: str | None = None


def follow(execution_arn: str, view: StateView, sleep: Callable[[float], None] = time.sleep) -> Ending:
    current = ["starting"]
    verdict: dict[str, Any] = {}

    def show(event: dict[str, Any]) -> None:
        current[0] = _show(event, view, verdict) or current[0]

    described, events = follow_execution(execution_arn, show, lambda: view.waiting(current[0]), sleep)
    return _ending(described, events, verdict)


def _show(event: dict[str, Any], view: StateView, verdict: dict[str, Any]) -> str | None:
    """Show one history event if it matters to an operator; the state it entered, if any.
    ``verdict`` keeps the last verdict decided (its reasons end the output)."""
    at = event["timestamp"].strftime("%H:%M:%S")
    entered = event.get("stateEnteredEventDetails")
    if entered:
        view.state(at, entered["name"])
        return str(entered["name"])
    exited = event.get("stateExitedEventDetails")
    if exited:
        line = exit_line(exited["name"], json.loads(exited.get("output") or "null"))
        if line is not None:
            view.state(at, f"  {line.what}:", line.detail, line.reasons)
            if line.verdict is not None:
                verdict.clear()
                verdict.update(line.verdict)
    for key in ("taskFailedEventDetails", "lambdaFunctionFailedEventDetails", "executionFailedEventDetails"):
        failed = event.get(key)
        if failed:
            view.state(at, "  failed:", str(failed.get("error", "")))
    return None


def _ending(
    described: Mapping[str, Any], events: list[dict[str, Any]], last: Mapping[str, Any] | None = None
) -> Ending:
    incident = _incident(events)
    status = described["status"]
    last = last or {}
    reasons = tuple(str(r) for r in last.get("reasons") or [])
    active = last.get("active_controller")
    if status == "SUCCEEDED":
        output = json.loads(described.get("output") or "{}")
        value = output.get("verdict", {}).get("value", {}) or last
        reasons = tuple(str(r) for r in value.get("reasons") or reasons)
        return Ending(
            status, value.get("verdict"), None, incident, VERIFIED, reasons, value.get("active_controller")
        )
    error = described.get("error")
    if status == "FAILED" and error in VERDICT_ERRORS:
        return Ending(status, error, None, incident, NOT_VERIFIED, reasons, active)
    return Ending(status, None, error or status, incident, ERROR, reasons, active)


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
    out = result_stream()
    try:
        use_deployed_account(args, root)
        stack_name = args.stack_name or read_deploy_config(root, cluster=args.cluster).stack_name
        decision = start_run(deployed_stack(stack_name), args.cluster, args.reason, args.dry_run, args.settle)
    except Exception as error:  # no stack, region, credentials, permission: one line, exit 2
        message = str(error) if isinstance(error, CommandError) else f"{type(error).__name__}: {error}"
        raise CommandError(f"could not start the verification: {message}", ERROR) from error
    verb = {"started": "started", "joined": "joined the running", "duplicate": "found the running"}[
        decision.outcome
    ]
    print(f"{verb} verification {decision.execution_arn}", file=out)
    region = decision.execution_arn.split(":")[3]
    print(
        f"console: https://{region}.console.aws.amazon.com/states/home?region={region}#/v2/executions/details/{decision.execution_arn}",
        file=out,
    )
    if not args.follow:
        return VERIFIED
    ending = follow(decision.execution_arn, StateView(out, out.isatty()))
    print(
        f"\nresult: {ending.status}  verdict: {ending.verdict or '-'}"
        + (f"  active controller: {ending.active_controller}" if ending.active_controller else "")
        + (f"  error: {ending.error}" if ending.error else ""),
        file=out,
    )
    out.writelines(f"{line}\n" for line in reason_lines(ending.reasons))
    if ending.incident:
        print(f"incident: {ending.incident}", file=out)
    out.flush()
    return ending.code
