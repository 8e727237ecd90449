"""``hyperpod-ha silence``: the operator's maintenance window on a cluster (:mod:`hyperpod_ha.silences`).

``silence start --cluster NAME --for 2h --reason TEXT`` silences the cluster from now for 1 min to
24 h: the stack still verifies and records every verdict, but opens no incident, publishes no
message (a "recovered" one excepted: it closes a page) and restores nothing. ``silence end``
ends it early; ``silence list`` shows the one in force and the last ones (who, when, why, who
ended them). Who is the caller's ARN (``sts:GetCallerIdentity``). The state table comes from the
cluster's deployed stack (found by the rule of :mod:`hyperpod_ha_cli.stacks`). Exit codes: 0
done (``list``: whatever it shows), 2 usage error (also a silence in force at ``start``, none at
``end``, a stack that does not watch the cluster), 3 runtime error.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Mapping
from typing import Any, TextIO

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from hyperpod_ha.human_time import duration, iso_utc
from hyperpod_ha.silences import MAX_REASON_CHARS, MAX_SECONDS, MIN_SECONDS, SilenceConflict, Silences
from hyperpod_ha_cli.errors import VERIFIED, CommandError, UsageError
from hyperpod_ha_cli.options import seconds_within, text_within
from hyperpod_ha_cli.output import result_stream
from hyperpod_ha_cli.stacks import add_target_options, aws_error_code, open_stack


def add_parser(commands: Any) -> None:
    """`hyperpod-ha silence start|list|end`: its arguments."""
    silence = commands.add_parser(
        "silence", help="a maintenance window: nothing pages, nothing is restored (at most 24 h)"
    )
    silence_commands = silence.add_subparsers(dest="silence_command", required=True)
    start = silence_commands.add_parser("start", help="silence the cluster from now")
    add_target_options(start)
    start.add_argument(
        "--for",
        dest="duration",
        required=True,
        metavar="DURATION",
        type=seconds_within(MIN_SECONDS, MAX_SECONDS),
        help=f"how long (as 90m, 2h; at most {MAX_SECONDS // 3600} h)",
    )
    start.add_argument(
        "--reason",
        required=True,
        type=text_within(MAX_REASON_CHARS),
        help=f"why, for the audit (one line, at most {MAX_REASON_CHARS} characters)",
    )
    listed = silence_commands.add_parser("list", help="the silence in force and the last ones")
    add_target_options(listed)
    end = silence_commands.add_parser("end", help="end the silence in force now")
    add_target_options(end)


def silence_lines(silence: Mapping[str, Any], now: float) -> list[str]:
    """One silence in words: when, how long, who, why, and who ended it."""
    started, until = int(silence["started_at"]), int(silence["until"])
    ended_at = silence.get("ended_at")
    if ended_at is not None:
        end = f"ended early {iso_utc(int(ended_at))} by {silence.get('ended_by')}"
    elif until > now:
        end = f"in force, {duration(until - now)} left"
    else:
        end = "ended"
    return [
        f"{iso_utc(started)} until {iso_utc(until)} ({duration(until - started)}): {end}",
        f"  by {silence['started_by']}: {silence['reason']}",
    ]


def _caller() -> str:
    """Who runs the command, as STS names them: the silence's audit says who."""
    refused = "cannot tell who you are (sts:GetCallerIdentity)"
    try:
        return str(boto3.client("sts").get_caller_identity()["Arn"])
    except ClientError as error:
        raise CommandError(f"{refused}: {aws_error_code(error)}") from None
    except BotoCoreError as error:
        raise CommandError(f"{refused}: {type(error).__name__}") from None


def _silences(outputs: Mapping[str, str]) -> Silences:
    table = outputs.get("StateTableName")
    if not table:
        raise CommandError("the deployed stack names no state table: deploy this version first")
    return Silences(boto3.client("dynamodb"), table)


def run_silence(args: argparse.Namespace) -> int:
    _, outputs = open_stack(args)
    silences = _silences(outputs)
    out: TextIO = result_stream()
    try:
        if args.silence_command == "start":
            done = silences.start(args.cluster, args.duration, args.reason, _caller())
            result: dict[str, Any] = {"cluster": args.cluster, "started": done.to_json()}
            lines = [f"cluster {args.cluster} silenced", *silence_lines(done.to_json(), time.time())]
        elif args.silence_command == "end":
            done = silences.end(args.cluster, _caller())
            result = {"cluster": args.cluster, "ended": done.to_json()}
            lines = [f"cluster {args.cluster}: silence ended", *silence_lines(done.to_json(), time.time())]
        else:
            now = time.time()
            record = silences.read(args.cluster).to_json(now)
            result = {"cluster": args.cluster, **record}
            lines = _list_lines(args.cluster, record, now)
    except SilenceConflict as error:
        raise UsageError(str(error)) from None
    except ClientError as error:
        raise CommandError(f"the state table refused: {aws_error_code(error)}") from None
    print(json.dumps(result, indent=2) if args.json else "\n".join(lines), file=out)
    out.flush()
    return VERIFIED


def _list_lines(cluster: str, record: Mapping[str, Any], now: float) -> list[str]:
    lines = [f"cluster {cluster}: {'silenced' if record['in_force'] else 'not silenced'}"]
    silences = record["silences"]
    if not silences:
        return [*lines, "no silence recorded"]
    for silence in silences:
        lines += silence_lines(silence, now)
    return lines
