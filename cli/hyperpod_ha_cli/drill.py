"""``hyperpod-ha drill start``: a failover drill on the deployed stack's cluster.

The drill state machine comes from the cluster's deployed stack (found by the rule of
:mod:`hyperpod_ha_cli.stacks`). ``--follow`` shows the states as they
run; the end is the report in words (controllers by name, instance id and address, every
reason); ``--json`` prints the drill report (the execution's output) alone, as one JSON
object. Exit codes: 0 completed, 1 failed or refused (the report says which), 2 usage error
(also a stack that does not watch the cluster), 3 runtime error (no credentials, AWS refused,
the execution itself failed). ``--lab`` (the dev extra) runs the same drill on the embedded stack
against the Slurm lab's real controllers (root; ``hyperpod_ha_dev.cli.lab_drill``) and prints its
report, with the same exit codes.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TextIO

import boto3

from hyperpod_ha.drill.models import DrillRequest, InvalidDrillRequest
from hyperpod_ha_cli import dev_tools
from hyperpod_ha_cli.drill_text import render_drill_report
from hyperpod_ha_cli.errors import NOT_VERIFIED, RUNTIME_ERROR, VERIFIED, CommandError, UsageError
from hyperpod_ha_cli.execution_events import after
from hyperpod_ha_cli.following import StateView, follow_execution
from hyperpod_ha_cli.output import result_stream
from hyperpod_ha_cli.stacks import add_target_options, open_stack

EXIT_CODES = {"completed": VERIFIED, "failed": NOT_VERIFIED, "refused": NOT_VERIFIED}


def add_parser(commands: Any) -> None:
    """`hyperpod-ha drill start`: its arguments."""
    drill = commands.add_parser("drill", help="failover drills")
    drill_commands = drill.add_subparsers(dest="drill_command", required=True)
    drill_start = drill_commands.add_parser("start", help="start a failover drill in the deployed stack")
    where = drill_start.add_mutually_exclusive_group(required=True)
    add_target_options(drill_start, where)
    where.add_argument(
        "--lab", action="store_true", help="against the Slurm lab, on the embedded stack (dev extra, root)"
    )
    drill_start.add_argument("--to", default="auto", metavar="HOST|auto", help="the backup to take control")
    drill_start.add_argument("--hand-back", action="store_true", help="then hand control back to the primary")
    drill_start.add_argument("--dry-run", action="store_true", help="check and plan only: no takeover")
    drill_start.add_argument("--follow", action="store_true", help="show the states as they run")
    drill_start.add_argument(
        "--slurm", choices=("24.11", "25.11", "22.05"), help="--lab: default the running lab's"
    )
    drill_start.add_argument(
        "--controllers", type=int, choices=(2, 3), help="--lab: default the running lab's"
    )


def start_drill(outputs: Mapping[str, str], request: DrillRequest) -> str:
    arn = outputs.get("FailoverDrillStateMachineArn")
    if not arn:
        raise CommandError("the deployed stack has no drill state machine: deploy this version first")
    data = {
        "cluster": request.cluster,
        "to": request.to,
        "hand_back": request.hand_back,
        "dry_run": request.dry_run,
    }
    started = boto3.client("stepfunctions").start_execution(
        stateMachineArn=arn,
        name=f"{request.cluster[:50]}-drill-{uuid.uuid4().hex[:12]}",
        input=json.dumps(data),
    )
    return str(started["executionArn"])


def wait_for_report(
    execution_arn: str, view: StateView | None, sleep: Callable[[float], None] = time.sleep
) -> tuple[str, dict[str, Any] | None, str | None]:
    """The execution's status, its report (when it succeeded) and its error (when not)."""
    show, waiting = (_shown_on(view), lambda: view.waiting("drill")) if view is not None else (None, None)
    described, _ = follow_execution(execution_arn, show, waiting, sleep)
    report = json.loads(described["output"]) if described.get("output") else None
    return described["status"], report, described.get("error")


def _shown_on(view: StateView) -> Callable[[dict[str, Any]], None]:
    """Each state entered, and each phase's recovery as it is measured."""

    def show(event: dict[str, Any]) -> None:
        view.entered(event)
        exited = event.get("stateExitedEventDetails")
        if exited and exited["name"] == "Measure the recovery":
            phase = json.loads(exited.get("output") or "{}").get("phase", {})
            view.state(
                event["timestamp"].strftime("%H:%M:%S"),
                f"  {phase.get('name')}: {phase.get('verdict')}",
                f"active {after(phase.get('active_seconds'))}, "
                f"verified {after(phase.get('verified_seconds'))}",
                tuple(str(r) for r in phase.get("reasons") or []),
            )

    return show


def _start(args: argparse.Namespace) -> str:
    """The started execution's ARN (the request checked before the stack is asked for)."""
    try:
        request = DrillRequest.from_json(
            {"cluster": args.cluster, "to": args.to, "hand_back": args.hand_back, "dry_run": args.dry_run}
        )
    except InvalidDrillRequest as error:
        raise UsageError(str(error)) from error
    _, outputs = open_stack(args)
    try:
        return start_drill(outputs, request)
    except CommandError:
        raise
    except Exception as error:
        raise CommandError(f"could not start the drill: {type(error).__name__}: {error}") from error


def run_drill_start(args: argparse.Namespace) -> int:
    if args.lab:
        lab_drill = dev_tools.load("cli.lab_drill", "drill start --lab")
        return int(lab_drill.run_lab_drill_command(args))
    if args.slurm or args.controllers:
        raise UsageError("--slurm and --controllers go with --lab")
    execution_arn = _start(args)
    out: TextIO = result_stream()
    if not args.json:
        print(f"started drill {execution_arn}", file=out)
    if not (args.follow or args.json):
        return VERIFIED
    view = StateView(out, out.isatty()) if args.follow and not args.json else None
    status, report, failure = wait_for_report(execution_arn, view)
    if report is None:
        raise CommandError(f"the drill execution {execution_arn} ended {status}: {failure}")
    if args.json:
        print(json.dumps(report, indent=2), file=out)
    else:
        print("\n" + "\n".join(render_drill_report(report)), file=out)
    out.flush()
    return EXIT_CODES.get(str(report.get("outcome")), RUNTIME_ERROR)
