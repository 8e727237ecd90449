"""``hyperpod-ha restore start``: restore redundancy on the deployed stack's cluster now.

The restore state machine comes from the cluster's deployed stack (found by the rule of
:mod:`hyperpod_ha_cli.stacks`). ``--mode`` (default: the stack's
``RestoreRedundancy``) and ``--dry-run`` (plan only: nothing is started, the plan names the
commands) go into its input. ``--follow`` shows the states as they run, then what the restore
did; ``--json`` waits as well and prints it as one object. Exit codes: 0 nothing left to restore
(restored, or nothing to do), 1 a controller was not restored or an action was left to a person,
2 usage error (also a stack that does not watch the cluster), 3 runtime error (also an execution
that itself failed).
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TextIO

import boto3

from hyperpod_ha_cli.errors import NOT_VERIFIED, VERIFIED, CommandError
from hyperpod_ha_cli.following import StateView, follow_execution
from hyperpod_ha_cli.output import result_stream
from hyperpod_ha_cli.stacks import add_target_options, open_stack

RESTORED, NOT_RESTORED = VERIFIED, NOT_VERIFIED
MODES = ("off", "standbys", "all")


def add_parser(commands: Any) -> None:
    """`hyperpod-ha restore start`: its arguments."""
    restore = commands.add_parser("restore", help="restore redundancy (start slurmctld where it is down)")
    restore_commands = restore.add_subparsers(dest="restore_command", required=True)
    start = restore_commands.add_parser("start", help="start a restore of redundancy in the deployed stack")
    add_target_options(start)
    start.add_argument("--mode", choices=MODES, help="default: the stack's RestoreRedundancy")
    start.add_argument("--dry-run", action="store_true", help="plan only: nothing is started")
    start.add_argument("--follow", action="store_true", help="show the states as they run, then the outcome")


def restore_input(cluster: str, mode: str | None, dry_run: bool) -> dict[str, Any]:
    data: dict[str, Any] = {"cluster": cluster, "dry_run": dry_run, "reason": "operator request"}
    if mode is not None:
        data["mode"] = mode
    return data


def start_restore(outputs: Mapping[str, str], data: Mapping[str, Any]) -> str:
    arn = outputs.get("RedundancyRestoreStateMachineArn")
    if not arn:
        raise CommandError("the deployed stack has no restore state machine: deploy this version first")
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
    active = plan.get("active_controller") or "none"
    lines = [f"mode {plan.get('mode')}, verdict {plan.get('verdict')}, active controller {active}"]
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
    _, outputs = open_stack(args)
    execution_arn = start_restore(outputs, data)
    out: TextIO = result_stream()
    if not args.json:
        print(f"started restore {execution_arn}", file=out)
    if not (args.follow or args.json):
        return RESTORED
    view = StateView(out, out.isatty()) if args.follow and not args.json else None
    status, output, failure = wait_for_outcome(execution_arn, view)
    if output is None:
        raise CommandError(f"the restore execution {execution_arn} ended {status}: {failure}")
    lines, code = outcome_lines(output)
    if args.json:
        result = {"execution_arn": execution_arn, "restored": code == RESTORED, "exit_code": code}
        print(json.dumps({**result, "outcome": output}, indent=2, default=str), file=out)
    else:
        print("\n" + "\n".join(lines), file=out)
    out.flush()
    return code
