"""``hyperpod-ha restore start``: restore redundancy on the deployed stack's cluster now.

The restore state machine comes from the deployed stack's outputs (in ``--region``/``--profile``,
else samconfig.toml's, else the SDK's default account). ``--mode`` (default: the stack's
``RestoreRedundancy``) and ``--dry-run`` (plan only: nothing is started, the plan names the
commands) go into its input. ``--follow`` shows the states as they run, then what the restore
did. Exit codes: 0 nothing left to restore (restored, or nothing to do), 1 a controller was not
restored or an action was left to a person, 2 error (bad input, no such stack or cluster, the
execution itself failed).
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TextIO

import boto3

from hyperpod_ha.request_fields import is_cluster_name
from hyperpod_ha_dev.cli import project_root, result_stream
from hyperpod_ha_dev.cli.aws import add_account_options, use_deployed_account
from hyperpod_ha_dev.cli.cluster_stack import UnknownCluster, stack_for_cluster
from hyperpod_ha_dev.cli.errors import CommandError
from hyperpod_ha_dev.cli.following import StateView, follow_execution
from hyperpod_ha_dev.cli.samconfig import read_deploy_config

RESTORED, NOT_RESTORED, ERROR = 0, 1, 2
MODES = ("off", "standbys", "all")


def add_parser(commands: Any) -> None:
    """`hyperpod-ha restore start`: its arguments."""
    restore = commands.add_parser("restore", help="restore redundancy (start slurmctld where it is down)")
    restore_commands = restore.add_subparsers(dest="restore_command", required=True)
    start = restore_commands.add_parser("start", help="start a restore of redundancy in the deployed stack")
    start.add_argument("--cluster", required=True, help="the cluster the deployed stack watches")
    start.add_argument("--mode", choices=MODES, help="default: the stack's RestoreRedundancy")
    start.add_argument("--dry-run", action="store_true", help="plan only: nothing is started")
    start.add_argument("--follow", action="store_true", help="show the states as they run, then the outcome")
    start.add_argument("--stack-name", help="default: samconfig.toml's stack_name")
    add_account_options(start)


def restore_input(cluster: str, mode: str | None, dry_run: bool) -> dict[str, Any]:
    if not is_cluster_name(cluster):
        raise CommandError("--cluster must be a HyperPod cluster name", ERROR)
    data: dict[str, Any] = {"cluster": cluster, "dry_run": dry_run, "reason": "operator request"}
    if mode is not None:
        data["mode"] = mode
    return data


def start_restore(outputs: Mapping[str, str], data: Mapping[str, Any]) -> str:
    arn = outputs.get("RedundancyRestoreStateMachineArn")
    if not arn:
        raise UnknownCluster("the deployed stack has no restore state machine: deploy this version first")
    started = boto3.client("stepfunctions").start_execution(
        stateMachineArn=arn,
        name=f"{str(data['cluster'])[:50]}-restore-{uuid.uuid4().hex[:12]}",
        input=json.dumps(dict(data)),
    )
    return str(started["executionArn"])


def wait_for_outcome(
    execution_arn: str, view: StateView | None, sleep: Callable[[float], None] = time.sleep
) -> tuple[str, dict[str, Any] | None, str | None]:
    """The execution's status, its output (when it succeeded) and its error (when not)."""
    show, waiting = (view.entered, lambda: view.waiting("restore")) if view is not None else (None, None)
    described, _ = follow_execution(execution_arn, show, waiting, sleep)
    output = json.loads(described["output"]) if described.get("output") else None
    return described["status"], output, described.get("error")


def outcome_lines(output: Mapping[str, Any]) -> tuple[list[str], int]:
    """What the restore did, in words, and the exit code it gives."""
    lease = (output.get("lease") or {}).get("value") or {}
    if lease.get("taken") is False:
        return [str(lease.get("reason") or "another run or drill holds the cluster")], NOT_RESTORED
    plan = (output.get("plan") or {}).get("value") or {}
    results = output.get("results") or []
    lines = [
        f"mode {plan.get('mode')}, verdict {plan.get('verdict')}, active {plan.get('active_controller')}"
    ]
    lines += [
        f"  {r.get('controller')}: {r.get('kind')}: {'restored' if r.get('restored') else 'NOT restored'}"
        f" ({r.get('what')})"
        for r in results
    ]
    lines += [f"  - {reason}" for reason in plan.get("reasons") or []]
    verification = (output.get("verification") or {}).get("value") or {}
    if verification.get("execution_arn"):
        lines.append(f"verification: {verification['execution_arn']}")
    left = plan.get("not_taken") or plan.get("blocked") or plan.get("stopped")
    failed = any(not r.get("restored") for r in results)
    return lines, NOT_RESTORED if failed or left else RESTORED


def run_restore_start(args: argparse.Namespace) -> int:
    data = restore_input(args.cluster, args.mode, args.dry_run)
    try:
        use_deployed_account(args, project_root())
        stack_name = args.stack_name or read_deploy_config(project_root()).stack_name
        execution_arn = start_restore(stack_for_cluster(stack_name, args.cluster), data)
    except (UnknownCluster, CommandError) as error:
        raise CommandError(str(error), ERROR) from error
    out: TextIO = result_stream()
    print(f"started restore {execution_arn}", file=out)
    if not args.follow:
        return RESTORED
    status, output, failure = wait_for_outcome(execution_arn, StateView(out, out.isatty()))
    if output is None:
        raise CommandError(f"the restore execution ended {status}: {failure}", ERROR)
    lines, code = outcome_lines(output)
    print("\n" + "\n".join(lines), file=out)
    out.flush()
    return code
