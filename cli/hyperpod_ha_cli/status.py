"""``hyperpod-ha status``: one view of a cluster's HA, and its exit code a check's.

From the deployed stack: a table of the controllers in the spirit of ``scontrol ping`` (as the
last verdict saw them), the last verdict, snapshot, rotation, drill and restore (the state
table's status records), a run, drill or restore in progress (the cluster's lease), the open
incidents (OpsCenter) and the silence in force. Times read ``1 d 20 h ago (2026-11-29 23:30
UTC)``; JSON keeps epoch seconds. Exit 0 when the last verdict is verified (HEALTHY or
FAILED_OVER), no incident is open and, with ``--max-age``, the verdict is recent enough; 1
otherwise (the first line and the JSON's ``check`` say why): a cron job or a Nagios-style check
can run it as it is. 2 usage error (also a stack that does not watch the cluster), 3 runtime
error. ``--embedded`` and ``--lab`` (the dev extra) show the embedded stack or the lab's.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import boto3

from hyperpod_ha import console_links
from hyperpod_ha.human_time import ago, duration, iso_utc
from hyperpod_ha.incidents.keys import CLUSTER_KEY, KIND_KEY, SOURCE
from hyperpod_ha.runs.naming import holder_execution_arn
from hyperpod_ha.silences import Silences
from hyperpod_ha.state_table import read_lease
from hyperpod_ha.status_records import StatusRecords
from hyperpod_ha_cli import dev_tools
from hyperpod_ha_cli.drill_text import render_drill_report
from hyperpod_ha_cli.errors import NOT_VERIFIED, VERIFIED
from hyperpod_ha_cli.options import seconds_within
from hyperpod_ha_cli.output import result_stream
from hyperpod_ha_cli.stacks import add_target_options, open_stack
from hyperpod_ha_cli.text import reason_lines, when

VERIFIED_VERDICTS = frozenset({"HEALTHY", "FAILED_OVER"})


def add_parser(commands: Any) -> None:
    """`hyperpod-ha status`: its arguments."""
    status = commands.add_parser("status", help="one view of a cluster's HA")
    add_target_options(status)
    status.add_argument(
        "--max-age",
        type=seconds_within(60, 30 * 86400),
        metavar="DURATION",
        help="exit 1 when the last verdict is older (as 90m, 2h)",
    )
    source = status.add_mutually_exclusive_group()
    source.add_argument("--embedded", action="store_true", help="the embedded stack (dev extra)")
    source.add_argument("--lab", action="store_true", help="the lab's embedded stack (dev extra)")


def cluster_status(outputs: Mapping[str, str], cluster: str) -> dict[str, Any]:
    region = boto3.client("dynamodb").meta.region_name
    table = outputs["StateTableName"]
    records = StatusRecords(boto3.client("dynamodb"), table).read(cluster)
    verdict = records.get("verdict")
    return {
        "cluster": cluster,
        # The table's rows: the last verdict's controllers (seconds and booleans, as recorded).
        "controllers": (verdict or {}).get("controllers") or [],
        "controllers_seen_at": (verdict or {}).get("recorded_at"),
        "last_verdict": verdict,
        "in_progress": _in_progress(outputs, table, cluster, region),
        "open_incidents": _open_incidents(cluster, region),
        "last_snapshot": records.get("snapshot"),
        "last_rotation": records.get("rotation"),
        "last_drill": _drill_figures(records.get("drill")),
        "last_restore": records.get("restore"),
        # The watchdog's last tick: its early warnings and every controller's figures.
        "early_warnings": records.get("warnings"),
        # The operator's silence in force (hyperpod-ha silence): nothing pages while it lasts.
        "silence": _silence(table, cluster),
    }


def _silence(table: str, cluster: str) -> dict[str, Any] | None:
    silence = Silences(boto3.client("dynamodb"), table).in_force(cluster)
    return None if silence is None else silence.to_json()


def _in_progress(
    outputs: Mapping[str, str], table: str, cluster: str, region: str, clock: Callable[[], float] = time.time
) -> dict[str, Any] | None:
    lease = read_lease(boto3.client("dynamodb"), table, cluster)
    if lease is None or lease.expired(clock()):
        return None
    arn = holder_execution_arn(lease, outputs["FailoverVerificationStateMachineArn"])
    return {
        "kind": "verification" if lease.kind == "run" else lease.kind,
        "lease_holder": lease.trigger,
        "execution_arn": arn,
        "execution_link": console_links.execution_console_url(arn, region),
        "since": lease.taken_at,
        "joined": lease.joined_count,
        # A run waiting for HyperPod's maintenance to end says what it saw last.
        "maintenance": lease.maintenance or None,
    }


def _open_incidents(cluster: str, region: str) -> list[dict[str, Any]]:
    ssm = boto3.client("ssm")
    filters: list[Any] = [
        {"Key": "Source", "Values": [SOURCE], "Operator": "Equal"},
        {"Key": "Status", "Values": ["Open"], "Operator": "Equal"},
    ]
    found = []
    for summary in ssm.describe_ops_items(OpsItemFilters=filters).get("OpsItemSummaries", []):
        data = summary.get("OperationalData") or {}
        if data.get(CLUSTER_KEY, {}).get("Value") != cluster:
            continue
        found.append(
            {
                "ops_item_id": summary["OpsItemId"],
                "title": summary.get("Title"),
                "severity": summary.get("Severity"),
                "kind": data.get(KIND_KEY, {}).get("Value"),
                "link": console_links.ops_item_console_url(summary["OpsItemId"], region),
            }
        )
    return found


def _drill_figures(drill: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not drill:
        return None
    keys = (
        "recorded_at",
        "outcome",
        "reasons",
        "from",
        "to",
        "takeover_seconds",
        "verified_seconds",
        "jobs_survived",
        "test_job",
        "hand_back",
        "verdict",
        "redundancy",
        "execution_link",
        "ops_item_id",
    )
    return {key: drill.get(key) for key in keys}


COLUMNS = ("CONTROLLER", "INSTANCE", "ADDRESS", "ROLE", "SLURMCTLD", "PING", "HEARTBEAT", "SLURMDBD")


def controller_table(controllers: Sequence[Mapping[str, Any]]) -> list[str]:
    """The controllers as ``scontrol ping`` would name them, one row each; ``-`` for unknown."""
    count = len(controllers)
    rows = [COLUMNS, *(_row(controller, count) for controller in controllers)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]


def _row(controller: Mapping[str, Any], count: int) -> tuple[str, ...]:
    return (
        str(controller.get("name") or "-"),
        str(controller.get("instance_id") or "-"),
        str(controller.get("address") or "-"),
        _role(controller, count),
        str(controller.get("slurmctld") or "-"),
        _flag(controller.get("answers_ping"), "UP", "DOWN"),
        _heartbeat(controller.get("heartbeat_age_seconds"), controller.get("writes_heartbeat")),
        _flag(controller.get("slurmdbd_reachable"), "UP", "DOWN"),
    )


def _role(controller: Mapping[str, Any], count: int) -> str:
    """``primary, active``, ``backup, standby``, ``backup2, down``: as ``scontrol ping`` names
    the SlurmctldHost lines (``backup`` alone when there are two), then what the verdict saw."""
    position = controller.get("position")
    if not isinstance(position, int) or isinstance(position, bool):
        where = "-"
    elif position == 0:
        where = "primary"
    else:
        where = "backup" if count <= 2 else f"backup{position}"
    active = controller.get("active")
    if active is True:
        return f"{where}, active"
    if active is not False:
        return where
    down = controller.get("answers_ping") is False or controller.get("slurmctld") in {
        "not running",
        "stopped",
    }
    return f"{where}, {'down' if down else 'standby'}"


def _flag(value: Any, yes: str, no: str) -> str:
    return yes if value is True else no if value is False else "-"


def _heartbeat(age: Any, writer: Any) -> str:
    if not isinstance(age, int | float) or isinstance(age, bool):
        return "-"
    return f"{ago(age)}{' (writer)' if writer is True else ''}"


def _redundancy_line(verdict: Mapping[str, Any]) -> str:
    """``redundancy none: no ready standby (ctl1: slurmctld not running)``."""
    level = verdict["redundancy"]
    # unknown: the standbys could not be judged (no active controller, or a field not read).
    nobody = "not judged" if level == "unknown" else "no ready standby"
    ready = ", ".join(verdict.get("standbys") or []) or nobody
    not_ready = "; ".join(f"{name}: {why}" for name, why in (verdict.get("not_ready") or {}).items())
    return f"redundancy {level}: {ready}" + (f" (not ready: {not_ready})" if not_ready else "")


def render(status: Mapping[str, Any], now: float | None = None) -> str:
    verdict_check = status.get("check")
    lines = [f"cluster {status['cluster']}"]
    if verdict_check:
        state = "verified" if verdict_check["verified"] else "NOT verified"
        lines[0] += f": {state} ({verdict_check['why']})"
    silence = status.get("silence")
    if silence:
        left = duration(max(int(silence["until"]) - (time.time() if now is None else now), 0))
        lines += [
            f"SILENCED until {iso_utc(silence['until'])} ({left} left) by {silence['started_by']}: "
            f"{silence['reason']}",
            "  nothing pages and nothing is restored; verification goes on "
            f"(`hyperpod-ha silence end --cluster {status['cluster']}` ends it)",
        ]
    stack = status.get("stack")
    if stack:
        lines.append(f"stack {stack['stack_name']} in {stack.get('region') or 'the default region'}")
    lines += _controller_lines(status, now)
    lines += _verdict_lines(status.get("last_verdict"), now)
    lines += early_warning_lines(status.get("early_warnings"), now)
    running = status.get("in_progress")
    lines.append(
        f"in progress: {running['kind']} since {when(running['since'], now)} ({running['lease_holder']}), "
        f"{running['joined']} joined; {running['execution_link'] or running['execution_arn']}"
        if running
        else "in progress: nothing"
    )
    if running and running.get("maintenance"):
        lines.append(f"  waiting for maintenance to end: {running['maintenance']}")
    incidents = status.get("open_incidents") or []
    lines.append(f"open incidents: {len(incidents)}")
    lines += [
        f"  - {i['ops_item_id']} (severity {i.get('severity')}) {i['title']} {i['link']}" for i in incidents
    ]
    lines += _record_lines(status, now)
    return "\n".join(lines)


def _controller_lines(status: Mapping[str, Any], now: float | None) -> list[str]:
    controllers = status.get("controllers") or []
    if not controllers:
        return ["controllers: none recorded (no verification has ended yet)"]
    seen = when(status.get("controllers_seen_at"), now)
    return [f"controllers, as the last verdict saw them {seen}:"] + [
        f"  {line}" for line in controller_table(controllers)
    ]


def _verdict_lines(verdict: Mapping[str, Any] | None, now: float | None) -> list[str]:
    if not verdict:
        return ["last verdict: none recorded", _accounting_line(None)]
    active = f", active controller {verdict['active_controller']}" if verdict.get("active_controller") else ""
    lines = [f"last verdict: {verdict.get('verdict')}{active}, {when(verdict.get('recorded_at'), now)}"]
    if verdict.get("silenced"):
        silenced = verdict["silenced"]
        lines.append(f"  found in a silence (by {silenced.get('started_by')}): no incident was opened")
    if verdict.get("redundancy"):
        lines.append(_redundancy_line(verdict))
    lines += reason_lines(verdict.get("reasons") or [])
    lines += _advisory_lines(verdict.get("advisories") or [])
    lines.append(_accounting_line(verdict.get("accounting")))
    return lines


# The figures a person reads first, in this order, with their units.
_FIGURES = (
    ("server_threads", "server threads", ""),
    ("agent_queue", "agent queue", ""),
    ("dbd_agent_queue", "DBD agent queue", ""),
    ("rpc_average_ms", "RPCs on average", " ms"),
    ("round_trip_ms", "sdiag round trip", " ms"),
    ("heartbeat_lag_seconds", "heartbeat lag", " s"),
    ("state_save_write_ms", "StateSaveLocation write", " ms"),
)


def early_warning_lines(record: Mapping[str, Any] | None, now: float | None) -> list[str]:
    """The watchdog's last early warnings (each kind, controller, headline and codes) and every
    controller's figures with its role."""
    if not record:
        return ["early warnings: none recorded (the watchdog has not ticked, or is off)"]
    warnings = record.get("warnings") or []
    lines = [f"early warnings ({when(record.get('recorded_at'), now)}): {len(warnings) or 'none'}"]
    for warning in warnings:
        codes = ", ".join(warning.get("codes") or [])
        lines.append(
            f"  - {warning.get('kind')} on {warning.get('controller')}: {warning.get('headline')} [{codes}]"
        )
    for figures in record.get("figures") or []:
        said = [
            f"{label} {figures[key]}{unit}" for key, label, unit in _FIGURES if figures.get(key) is not None
        ]
        lines.append(
            f"  {figures.get('controller')} ({figures.get('role')}): {', '.join(said) or 'no figures'}"
        )
    return lines


def _advisory_lines(advisories: list[Mapping[str, Any]]) -> list[str]:
    """The known-bad releases the controllers run (hyperpod_ha.slurm.advisories), one line each."""
    lines = [f"known-bad Slurm releases: {len(advisories)}"] if advisories else []
    for row in advisories:
        releases = ", ".join(row.get("releases") or [])
        fixed = ", ".join(row.get("fixed_in") or [])
        lines.append(f"  - Slurm {releases}: {row.get('advisory')}: {row.get('what')} (fixed in {fixed})")
    return lines


def _record_lines(status: Mapping[str, Any], now: float | None) -> list[str]:
    """The last snapshot, rotation roll-out, drill and restore, each as its record says."""
    lines = []
    snapshot = status.get("last_snapshot")
    if snapshot:
        what = f"{snapshot.get('kind')} {snapshot.get('id')} {snapshot.get('status')}"
        lines.append(f"last snapshot: {what}, {when(snapshot.get('recorded_at'), now)}")
    else:
        lines.append("last snapshot: none recorded")
    rotation = status.get("last_rotation")
    if rotation:
        complete = "complete" if rotation.get("complete") else "NOT complete"
        lines.append(f"last rotation roll-out: {complete}, {when(rotation.get('recorded_at'), now)}")
        lines += [f"  - {c.get('instance_id')}: {c.get('outcome')}" for c in rotation.get("controllers", [])]
    else:
        lines.append("last rotation roll-out: none recorded")
    drill = status.get("last_drill")
    if drill:
        lines.append(f"last drill: {drill.get('outcome')}, {when(drill.get('recorded_at'), now)}")
        lines += [f"  {line}" for line in render_drill_report(drill)[1:]]
    else:
        lines.append("last drill: none recorded")
    restore = status.get("last_restore")
    if restore:
        lines.append(
            f"last restore: mode {restore.get('mode')}, verdict {restore.get('verdict')}, "
            f"{when(restore.get('recorded_at'), now)}"
        )
        for action in restore.get("actions") or []:
            done = "restored" if action.get("restored") else "NOT restored"
            lines.append(f"  {action.get('controller')}: {done} ({action.get('what')})")
        lines += [f"  - {reason}" for reason in restore.get("reasons") or []]
    else:
        lines.append("last restore: none recorded")
    return lines


def _accounting_line(accounting: Mapping[str, Any] | None) -> str:
    """The accounting database as the last run's discovery saw it (DescribeCluster)."""
    if not accounting:
        return "accounting database: not recorded"
    strategy = accounting.get("config_strategy") or "-"
    database = accounting.get("database")
    if not database:
        return f"accounting database: internal (the controllers' slurmdbd); SlurmConfigStrategy {strategy}"
    where = f"{database.get('endpoint')}:{database.get('port') or '-'}/{database.get('name') or '-'}"
    return (
        f"accounting database: external {where} (secret {database.get('secret_arn')}), configured by "
        f"HyperPod; SlurmConfigStrategy {strategy}; this stack does not rotate it"
    )


def check(status: Mapping[str, Any], max_age: int | None, now: float | None = None) -> dict[str, Any]:
    """What the exit code says, and why: verified only when the last verdict is HEALTHY or
    FAILED_OVER, no incident is open and (with ``max_age``) the verdict is that recent."""
    verdict = status.get("last_verdict") or {}
    incidents = status.get("open_incidents") or []
    now = time.time() if now is None else now
    age = now - float(verdict["recorded_at"]) if verdict.get("recorded_at") else None
    if not verdict:
        why = "no verdict recorded yet"
    elif verdict.get("verdict") not in VERIFIED_VERDICTS:
        why = f"the last verdict is {verdict.get('verdict')}"
    elif incidents:
        why = f"{len(incidents)} incident{'s' if len(incidents) > 1 else ''} open"
    elif max_age is not None and (age is None or age > max_age):
        why = f"the last verdict is older than {ago(max_age).removesuffix(' ago')}"
    else:
        return {"verified": True, "exit_code": VERIFIED, "why": f"the last verdict is {verdict['verdict']}"}
    return {"verified": False, "exit_code": NOT_VERIFIED, "why": why}


def run_status(args: argparse.Namespace) -> int:
    out = result_stream()
    if args.lab or args.embedded:
        views = dev_tools.load("cli.status_views", "status --lab/--embedded")
        status = views.lab_status(args.cluster) if args.lab else views.embedded_status(args.cluster)
    else:
        target, outputs = open_stack(args)
        status = {**cluster_status(outputs, args.cluster), "stack": target.to_json()}
    verdict_check = check(status, args.max_age)
    status = {**status, "check": verdict_check}
    print(json.dumps(status, indent=2, default=str) if args.json else render(status), file=out)
    out.flush()
    return int(verdict_check["exit_code"])
