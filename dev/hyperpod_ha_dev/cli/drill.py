"""``hyperpod-ha drill start``: a failover drill on the deployed stack's cluster.

The drill state machine comes from the deployed stack's outputs (in ``--region``/``--profile``,
else samconfig.toml's, else the SDK's default account). ``--follow`` shows the states as they
run; the end is the report in words (controllers by name, instance id and address, every
reason); ``--json`` prints the drill report (the execution's output) alone, as one JSON
object. Exit codes: 0 completed, 1 failed, 2 error (bad input, no such stack or cluster, no
region or credentials, the execution itself failed), 3 refused. ``--lab`` runs the same drill
on the embedded stack against the Slurm lab's real controllers (root;
:mod:`hyperpod_ha_dev.simulation.lab.drill_run`) and prints its report, with the same exit codes.
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
from hyperpod_ha_dev.cli import project_root, result_stream
from hyperpod_ha_dev.cli.aws import add_account_options, use_deployed_account
from hyperpod_ha_dev.cli.cluster_stack import UnknownCluster, cluster_name, stack_for_cluster
from hyperpod_ha_dev.cli.drill_text import render_drill_report
from hyperpod_ha_dev.cli.errors import CommandError
from hyperpod_ha_dev.cli.following import StateView, follow_execution
from hyperpod_ha_dev.cli.samconfig import read_deploy_config
from hyperpod_ha_dev.execution_events import after

COMPLETED, FAILED, ERROR, REFUSED = 0, 1, 2, 3
EXIT_CODES = {"completed": COMPLETED, "failed": FAILED, "refused": REFUSED}


def add_parser(commands: Any) -> None:
    """`hyperpod-ha drill start`: its arguments."""
    drill = commands.add_parser("drill", help="failover drills")
    drill_commands = drill.add_subparsers(dest="drill_command", required=True)
    drill_start = drill_commands.add_parser("start", help="start a failover drill in the deployed stack")
    where = drill_start.add_mutually_exclusive_group(required=True)
    where.add_argument("--cluster", type=cluster_name, help="the cluster the deployed stack watches")
    where.add_argument(
        "--lab", action="store_true", help="against the Slurm lab, on the embedded stack (root)"
    )
    drill_start.add_argument("--to", default="auto", metavar="HOST|auto", help="the backup to take control")
    drill_start.add_argument("--hand-back", action="store_true", help="then hand control back to the primary")
    drill_start.add_argument("--dry-run", action="store_true", help="check and plan only: no takeover")
    drill_start.add_argument("--follow", action="store_true", help="show the states as they run")
    drill_start.add_argument("--json", action="store_true", help="wait and print the drill report as JSON")
    drill_start.add_argument("--stack-name", help="default: samconfig.toml's stack_name")
    add_account_options(drill_start)
    drill_start.add_argument(
        "--slurm", choices=("24.11", "25.11", "22.05"), help="--lab: default the running lab's"
    )
    drill_start.add_argument(
        "--controllers", type=int, choices=(2, 3), help="--lab: default the running lab's"
    )


def start_drill(outputs: Mapping[str, str], request: DrillRequest) -> str:
    arn = outputs.get("FailoverDrillStateMachineArn")
    if not arn:
        raise UnknownCluster("the deployed stack has no drill state machine: deploy this version first")
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
    """The started execution's ARN; ``DrillNotStarted`` with the reason otherwise."""
    try:
        request = DrillRequest.from_json(
            {"cluster": args.cluster, "to": args.to, "hand_back": args.hand_back, "dry_run": args.dry_run}
        )
        use_deployed_account(args, project_root())
        stack_name = args.stack_name or read_deploy_config(project_root(), cluster=args.cluster).stack_name
        return start_drill(stack_for_cluster(stack_name, request.cluster), request)
    except (InvalidDrillRequest, UnknownCluster, CommandError) as error:
        raise DrillNotStarted(str(error)) from error
    except Exception as error:
        raise DrillNotStarted(f"could not start the drill: {type(error).__name__}: {error}") from error


class DrillNotStarted(CommandError):
    """The drill did not start: exit 2."""

    def __init__(self, message: str) -> None:
        super().__init__(message, ERROR)


def run_drill_start(args: argparse.Namespace) -> int:
    if args.lab:
        return _run_lab_drill(args)
    if args.slurm or args.controllers:
        raise CommandError("--slurm and --controllers go with --lab", ERROR)
    execution_arn = _start(args)
    out: TextIO = result_stream()
    if not args.json:
        print(f"started drill {execution_arn}", file=out)
    if not (args.follow or args.json):
        return COMPLETED
    view = StateView(out, out.isatty()) if args.follow and not args.json else None
    status, report, failure = wait_for_report(execution_arn, view)
    if report is None:
        raise CommandError(f"the drill execution ended {status}: {failure}", ERROR)
    if args.json:
        print(json.dumps(report, indent=2), file=out)
    else:
        print("\n" + "\n".join(render_drill_report(report)), file=out)
    out.flush()
    return EXIT_CODES.get(str(report.get("outcome")), ERROR)


def _run_lab_drill(args: argparse.Namespace) -> int:
    """The drill on the embedded stack against the lab; its report as ``drill start`` prints it."""
    from hyperpod_ha_dev.cli.status import cluster_status
    from hyperpod_ha_dev.simulation.lab.drill_run import lab_as_asked, run_lab_drill
    from hyperpod_lab import LabConfigError, LabError

    request = {"to": args.to, "hand_back": args.hand_back, "dry_run": args.dry_run}
    try:
        lab = lab_as_asked(args.slurm, args.controllers)
        drill = run_lab_drill(lab, project_root(), request, cluster_status)
    except LabConfigError as error:
        raise CommandError(str(error), ERROR) from error
    except LabError as error:
        raise CommandError(f"the lab is not usable: {error.reason}", ERROR) from error
    out = result_stream()
    if args.json:
        print(json.dumps(drill.to_json(), indent=2, default=str), file=out)
    else:
        print(f"Slurm {drill.slurm_version}, {drill.controllers} controllers", file=out)
        for entry in drill.timeline:
            print(f"  {entry.seconds:7.2f} s  {entry.what}  {entry.detail}".rstrip(), file=out)
    out.flush()
    if drill.report is None:
        raise CommandError(
            f"the drill execution ended {drill.status}: {drill.error}", ERROR, result_printed=args.json
        )
    if not args.json:
        print("\n" + "\n".join(render_drill_report(drill.report)), file=out)
        out.flush()
    return EXIT_CODES.get(str(drill.report.get("outcome")), ERROR)
