"""``hyperpod-ha runbook start``: an operator starts (or joins) the cluster's verification.

The state machine and the lease table come from the deployed stack's outputs; the run is
started through the same lease as the automatic triggers, so an operator never starts a
second run beside an active one. ``--follow`` shows the states as they run (each probe's
controller by name, instance id and address; each verdict with every reason) and ends with the
verdict and its reasons; ``--json`` waits as well and prints the ending as one object. Exit 0
verified (or started, without either), 1 not verified, 2 usage error (also a stack that does not
watch the cluster: refused before anything starts), 3 runtime error (no credentials, AWS
refused, the execution itself failed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hyperpod_ha.console_links import execution_console_url
from hyperpod_ha.runs.models import RunDecision, Trigger
from hyperpod_ha.runs.settings import RunSettings, VerificationRunsSettings
from hyperpod_ha.runs.verification_runs import VerificationRuns
from hyperpod_ha_cli.errors import NOT_VERIFIED, RUNTIME_ERROR, VERIFIED, CommandError
from hyperpod_ha_cli.execution_events import exit_line
from hyperpod_ha_cli.following import StateView, follow_execution
from hyperpod_ha_cli.options import seconds_within, text_within
from hyperpod_ha_cli.output import result_stream
from hyperpod_ha_cli.stacks import add_target_options, open_stack
from hyperpod_ha_cli.text import reason_lines

VERDICT_ERRORS = frozenset({"DEGRADED", "SPLIT_BRAIN", "DOWN", "UNKNOWN"})


def add_parser(commands: Any) -> None:
    """`hyperpod-ha runbook start`: its arguments."""
    runbook = commands.add_parser("runbook", help="the operator runbook")
    runbook_commands = runbook.add_subparsers(dest="runbook_command", required=True)
    start = runbook_commands.add_parser("start", help="start (or join) a failover verification")
    add_target_options(start)
    start.add_argument("--reason", default="operator request", type=text_within(200))
    start.add_argument("--dry-run", action="store_true", help="checks and verdict only")
    start.add_argument(
        "--settle",
        type=seconds_within(0, 3600),
        default=0,
        metavar="DURATION",
        help="wait before the first check, up to 1h (default 0: check now)",
    )
    start.add_argument("--follow", action="store_true", help="show the states as they run")


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
    return Ending(status, None, error or status, incident, RUNTIME_ERROR, reasons, active)


def _incident(events: list[dict[str, Any]]) -> str | None:
    for event in reversed(events):
        exited = event.get("stateExitedEventDetails")
        if exited and exited["name"] in ("Open an incident", "Report that verification could not complete"):
            incident = json.loads(exited.get("output") or "{}").get("incident", {}).get("value", {})
            link: str | None = incident.get("links", {}).get("ops_item") or incident.get("ops_item_id")
            return link
    return None


def run_runbook_start(args: argparse.Namespace) -> int:
    out = result_stream()
    _, outputs = open_stack(args)
    try:
        decision = start_run(outputs, args.cluster, args.reason, args.dry_run, args.settle)
    except Exception as error:  # AWS refused, a setting of the stack not read: one line, exit 3
        raise CommandError(f"could not start the verification: {type(error).__name__}: {error}") from error
    verb = {"started": "started", "joined": "joined the running", "duplicate": "found the running"}[
        decision.outcome
    ]
    region = decision.execution_arn.split(":")[3]
    link = execution_console_url(decision.execution_arn, region) or decision.execution_arn
    if not args.json:
        print(f"{verb} verification {decision.execution_arn}\nconsole: {link}", file=out)
    if not (args.follow or args.json):
        return VERIFIED
    # With --json the states are read (the verdict, the incident) but not shown.
    view = StateView(out, out.isatty()) if args.follow and not args.json else StateView(io.StringIO(), False)
    ending = follow(decision.execution_arn, view)
    if args.json:
        print(
            json.dumps(_ending_json(decision.outcome, decision.execution_arn, link, ending), indent=2),
            file=out,
        )
        out.flush()
        return ending.code
    outcome = {VERIFIED: "verified", NOT_VERIFIED: "NOT verified"}.get(ending.code, "could not verify")
    print(
        f"\n{outcome}: verdict {ending.verdict or '-'}"
        + (f", active controller {ending.active_controller}" if ending.active_controller else "")
        + (f" (the execution ended {ending.status}: {ending.error})" if ending.error else ""),
        file=out,
    )
    out.writelines(f"{line}\n" for line in reason_lines(ending.reasons))
    if ending.incident:
        print(f"incident: {ending.incident}", file=out)
    out.flush()
    return ending.code


def _ending_json(outcome: str, execution_arn: str, link: str, ending: Ending) -> dict[str, Any]:
    return {
        "run": outcome,
        "execution_arn": execution_arn,
        "execution_link": link,
        "status": ending.status,
        "verified": ending.code == VERIFIED,
        "verdict": ending.verdict,
        "active_controller": ending.active_controller,
        "reasons": list(ending.reasons),
        "error": ending.error,
        "incident": ending.incident,
        "exit_code": ending.code,
    }
