"""What the restore scenarios do on the lab's embedded stack besides the fault, and what they read.

A watchdog tick delivered as the schedule would (``tick``); the runs and restores followed to
their end (``settle``); a restore started by hand as ``hyperpod-ha restore start`` does
(``restore_by_hand``); and what came out: the OpsItems (``incidents``), the notices on the
stack's topic (``notices``, read from moto, which keeps what was sent), and the last restore's
status record (``last_restore``).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, Final

import boto3

from hyperpod_ha.status_records import StatusRecords
from hyperpod_ha_dev.embedded.stack import EmbeddedStack
from hyperpod_ha_dev.simulation.lab.progress import Drill
from hyperpod_ha_dev.simulation.lab.verify import settled_restore_actions
from hyperpod_ha_dev.simulation.ticker import FOUND

# A crash loop runs two restores of about 90 s each (the restore's defaults: up to 20 s for
# ping, then six checks 10 s apart) and three verification runs.
SETTLE_SECONDS: Final = 600.0
KIND_KEY: Final = "hyperpod-ha:kind"
RESTORE_ACTIONS_KEY: Final = "hyperpod-ha:restore-actions"  # the restores' notes (IncidentFunction's note)


def tick(drill: Drill, label: str) -> dict[str, Any]:
    """One watchdog tick; its result is kept in the scenario's details under ``ticks``."""
    at = time.time()
    result: dict[str, Any] = drill.run.stack.tick() or {}
    seen = {
        "label": label,
        "seconds_after_fault": round(at - drill.fault_at, 1) if drill.fault_at is not None else None,
        "took_seconds": round(time.time() - at, 1),
        "outcome": result.get("outcome"),
        "verdict": result.get("verdict"),
        "redundancy": result.get("redundancy"),
        "not_ready": dict(result.get("not_ready") or {}),
        "redundancy_step": result.get("redundancy_step"),
    }
    drill.details.setdefault("ticks", []).append(seen)
    drill.note(
        "watchdog tick",
        f"{label}: {seen['outcome']}, {seen['verdict']}, redundancy {seen['redundancy']}, "
        f"redundancy-lost step {seen['redundancy_step']} ({seen['took_seconds']} s)",
    )
    return result


def tick_then_run(drill: Drill, reason: str) -> dict[str, Any]:
    """The watchdog's tick finds the fault; when it starts no run (a verified verdict), an
    operator's run follows, as ``runbook start`` would (the restore follows either)."""
    found = tick(drill, "finds it")
    if found.get("outcome") not in FOUND:
        drill.operator_run(reason)
    return found


def settle(drill: Drill) -> list[dict[str, Any]]:
    """Wait until every run and restore ended; the restores' actions, kept under ``restore_actions``."""
    actions = [dict(a) for a in settled_restore_actions(drill.run.stack, SETTLE_SECONDS)]
    drill.details["restore_actions"] = actions
    restores = len(drill.run.stack.executions("RedundancyRestoreStateMachineArn"))
    drill.note(
        "runs and restores ended",
        f"{len(drill.run.stack.executions())} run(s), {restores} restore(s); actions: "
        + (
            "; ".join(f"{a.get('controller')} {a.get('kind')} restored={a.get('restored')}" for a in actions)
            or "none"
        ),
    )
    return actions


def restore_by_hand(drill: Drill, mode: str) -> dict[str, Any]:
    """A restore started as ``hyperpod-ha restore start --cluster NAME`` with ``mode``, to its end."""
    stack = drill.run.stack
    sfn = boto3.client("stepfunctions")
    cluster = str(stack.parameters["ClusterName"])
    arn = sfn.start_execution(
        stateMachineArn=str(stack.outputs["RedundancyRestoreStateMachineArn"]),
        name=f"by-hand-{uuid.uuid4().hex[:12]}",
        input=json.dumps({"cluster": cluster, "mode": mode}),
    )["executionArn"]
    deadline = time.monotonic() + SETTLE_SECONDS
    status = sfn.describe_execution(executionArn=arn)["status"]
    while status == "RUNNING" and time.monotonic() < deadline:
        time.sleep(1.0)
        status = sfn.describe_execution(executionArn=arn)["status"]
    record = last_restore(stack) or {}
    drill.note(
        "restore started by hand",
        f"mode {mode}: {status}; blocked: {record.get('blocked')}; actions: {record.get('actions')}",
    )
    return record


def incidents() -> list[dict[str, Any]]:
    """Every OpsItem of the stack: its kind, status, title, description and the restores' notes
    (the JSON list under ``hyperpod-ha:restore-actions``, ``""`` when none)."""
    ssm = boto3.client("ssm")
    found = ssm.describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    )["OpsItemSummaries"]
    items = [ssm.get_ops_item(OpsItemId=item["OpsItemId"])["OpsItem"] for item in found]
    return [
        {
            "kind": (item.get("OperationalData") or {}).get(KIND_KEY, {}).get("Value"),
            "status": item.get("Status"),
            "title": item.get("Title", ""),
            "description": item.get("Description", ""),
            "restore_notes": (item.get("OperationalData") or {})
            .get(RESTORE_ACTIONS_KEY, {})
            .get("Value", ""),
        }
        for item in items
    ]


def notices(stack: EmbeddedStack) -> list[dict[str, str]]:
    """Every message on the stack's notification topic, oldest first (moto keeps them)."""
    from moto.sns.models import sns_backends

    arn = str(stack.outputs["NotificationTopicArn"])
    _, _, _, region, account, _ = arn.split(":")
    topic = sns_backends[account][region].topics[arn]
    return [
        {
            "subject": subject or "",
            "body": message,
            "kind": str(_attribute((attributes or {}).get("kind"))),
        }
        for _, message, subject, attributes, _ in topic.sent_notifications
    ]


def last_restore(stack: EmbeddedStack) -> dict[str, Any] | None:
    """The last restore's status record (what ``hyperpod-ha status`` prints)."""
    records = StatusRecords(boto3.client("dynamodb"), stack.ref("StateTable"))
    return records.read(str(stack.parameters["ClusterName"])).get("restore")


def _attribute(value: Any) -> str:
    if not isinstance(value, dict):
        return ""
    return str(value.get("Value", value.get("StringValue", "")))
