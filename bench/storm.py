"""An event storm for one cluster through the real handlers on the embedded stack.

10,000 HyperPod node events (mostly unhealthy workers, some controller events, EventBridge
redeliveries of the same id) and then 1,000 SNS controller notifications (with SNS
redeliveries of the same MessageId), invoked in process. Measured: events per second, the
executions started, the notices that reach the notification topic (an SQS queue subscribed
to it) and the DynamoDB write calls per event, counted at moto's DynamoDB front door (one
count per API call, failed conditional writes included: DynamoDB bills those too).

Runs are held in their settle wait (SettleSeconds=600) so the run started by the first
controller event stays active for the whole storm; they are stopped at the end."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import boto3

from bench import REGION, ROOT
from bench.console import quiet_stdout
from bench.stats import at_most, ratio
from bench.storm_plan import WORKERS, StormEvent, node_event_plan, sns_plan
from bench.storm_writes import (
    WriteCounter,
    by_table,
    counting_dynamodb_writes,
    delta,
)
from hyperpod_ha_dev.embedded.site import create_site, embedded_aws
from hyperpod_ha_dev.embedded.stack import create_stack

NODE_EVENTS: Final = 10_000
NOTIFICATIONS: Final = 1_000
WRITES_PER_EVENT_TARGET: Final = 1.0
BASELINE_PUT_ITEMS: Final = 300


@dataclass
class PhaseResult:
    events: int
    seconds: float
    outcomes: Counter[str]
    kinds: Counter[str]
    calls: Counter[tuple[str, str]]
    failed: Counter[tuple[str, str]]
    writes_by_kind: dict[str, Counter[str]]


def run_phase(
    invoke: Callable[[Mapping[str, Any]], Any], plan: Sequence[StormEvent], counter: WriteCounter
) -> PhaseResult:
    outcomes: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    writes_by_kind: dict[str, Counter[str]] = {}
    calls_before, failed_before = counter.snapshot()
    started = time.perf_counter()
    for item in plan:
        before = Counter(counter.calls)
        try:
            result = invoke(item.event)
            for record in result.get("records", []):
                outcomes[str(record.get("outcome"))] += 1
        except Exception as error:  # a handler error is a result of the storm, not of the bench
            outcomes[f"error:{getattr(error, 'error_type', type(error).__name__)}"] += 1
        kinds[item.kind] += 1
        spent = writes_by_kind.setdefault(item.kind, Counter())
        for (action, _table), calls in delta(counter.calls, before).items():
            spent[action] += calls
    seconds = time.perf_counter() - started
    calls_after, failed_after = counter.snapshot()
    return PhaseResult(
        len(plan),
        seconds,
        outcomes,
        kinds,
        delta(calls_after, calls_before),
        delta(failed_after, failed_before),
        writes_by_kind,
    )


def phase_report(phase: PhaseResult, put_item_ms: float, table_names: Mapping[str, str]) -> dict[str, Any]:
    calls = sum(phase.calls.values())
    per_event = round(calls / phase.events, 3)
    per_kind = {
        kind: {action: round(count / phase.kinds[kind], 3) for action, count in sorted(spent.items())}
        for kind, spent in sorted(phase.writes_by_kind.items())
    }
    ms_per_event = 1000 * phase.seconds / phase.events
    return {
        "events": phase.events,
        "mix": dict(sorted(phase.kinds.items())),
        "seconds": round(phase.seconds, 2),
        "events_per_second": round(phase.events / phase.seconds, 1),
        "ms_per_event": round(ms_per_event, 2),
        # The same machine's cost of one moto PutItem: a ratio that travels between machines.
        "event_cost_in_put_items": ratio(ms_per_event, put_item_ms, 1),
        "outcomes": dict(sorted(phase.outcomes.items())),
        "dynamodb_writes": at_most(
            per_event,
            WRITES_PER_EVENT_TARGET,
            calls=calls,
            failed_conditional=sum(phase.failed.values()),
            per_table=by_table(phase.calls, table_names),
            failed_per_table=by_table(phase.failed, table_names),
            per_kind=per_kind,
        ),
    }


def node_writes_note(report: dict[str, Any]) -> str:
    """Which kinds of node event cost more than one write, and why (the mix averages them out)."""
    writes = report["dynamodb_writes"]
    heavy = {
        kind: actions
        for kind, actions in writes["per_kind"].items()
        if sum(actions.values()) > WRITES_PER_EVENT_TARGET
    }
    if not heavy:
        return ""
    described = "; ".join(
        f"{kind} {sum(actions.values()):.2f} ({', '.join(f'{a} {n}' for a, n in actions.items())})"
        for kind, actions in heavy.items()
    )
    status = "Met on average" if writes["met"] else "Missed"
    note = f"{status} ({writes['value']} write calls per event); above one per event: {described}."
    controller = heavy.get("controller-unhealthy", {})
    if "PutItem" in controller and "UpdateItem" in controller:
        note += (
            " A controller event while a run holds the lease tries to take it (a conditional PutItem "
            "that fails) and then joins the run (an UpdateItem); reading the lease first (GetItem, a "
            "read request) and putting only when it is free makes it one write during a storm."
        )
    return note


def sns_writes_note(report: dict[str, Any], idempotency_table: str) -> str:
    writes = report["dynamodb_writes"]
    idempotency = sum(writes["per_table"].get(idempotency_table, {}).values())
    rest = writes["calls"] - idempotency
    events = report["events"]
    verdict = "met" if writes["met"] else "missed"
    return (
        f"Target {verdict} for SNS: of {writes['value']} write calls per notification, "
        f"{idempotency / events:.2f} go to the idempotency table (one record per new MessageId, its "
        "answer, written after the work: ingestion/notification_records.py; a redelivery is answered "
        f"from it by a read) and {rest / events:.2f} to the state table (taking the cluster's lease, or "
        "joining it: the lease records the first 100 joined triggers, later joins write nothing)."
    )


def _put_item_baseline(count: int = BASELINE_PUT_ITEMS) -> float:
    """Milliseconds per moto PutItem on this machine, now."""
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    table = "bench-put-item-baseline"
    dynamodb.create_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    started = time.perf_counter()
    for index in range(count):
        dynamodb.put_item(TableName=table, Item={"pk": {"S": f"item-{index}"}, "n": {"N": str(index)}})
    elapsed = time.perf_counter() - started
    dynamodb.delete_table(TableName=table)
    return 1000 * elapsed / count


def _watch_topic(topic_arn: str) -> str:
    sqs, sns = boto3.client("sqs", region_name=REGION), boto3.client("sns", region_name=REGION)
    url = sqs.create_queue(QueueName="bench-notices")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=arn)
    return url


def _drain(url: str) -> list[str]:
    """The subjects of every notice that reached the topic."""
    sqs = boto3.client("sqs", region_name=REGION)
    subjects: list[str] = []
    while True:
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=600).get(
            "Messages", []
        )
        if not messages:
            return subjects
        subjects += [str(json.loads(message["Body"]).get("Subject")) for message in messages]


def _stop_running(state_machine_arn: str) -> list[str]:
    """moto runs executions in threads: stop them before the mock goes away (as tests/conftest.py)."""
    sfn = boto3.client("stepfunctions", region_name=REGION)
    executions = sfn.list_executions(stateMachineArn=state_machine_arn)["executions"]
    for execution in executions:
        if execution["status"] != "RUNNING":
            continue
        # moto's worker has no environment until its thread has begun; it cannot be stopped before.
        for _ in range(50):
            try:
                sfn.stop_execution(executionArn=execution["executionArn"], error="BenchOver")
                break
            except AttributeError:
                time.sleep(0.05)
    return [str(execution["executionArn"]) for execution in executions]


def _load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((ROOT / "events" / name).read_text())
    return loaded


def measure(
    node_events: int = NODE_EVENTS, notifications: int = NOTIFICATIONS, seed: int = 8
) -> dict[str, Any]:
    node_plan = node_event_plan(
        node_events,
        seed,
        _load("eventbridge_node_health_worker.json"),
        _load("eventbridge_node_health_controller.json"),
    )
    notification_plan = sns_plan(notifications, seed, _load("sns_controller_on_primary.json"))
    with embedded_aws():
        site = create_site(workers=WORKERS)
        site.extra_parameters.update({"SettleSeconds": 600})
        stack = create_stack(ROOT, site.stack_parameters())
        state_machine = str(stack.outputs["FailoverVerificationStateMachineArn"])
        table_names = {
            physical.ref: logical_id
            for logical_id, physical in stack.resources.items()
            if physical.type == "AWS::DynamoDB::Table"
        }
        queue = _watch_topic(str(stack.outputs["NotificationTopicArn"]))
        put_item_ms = _put_item_baseline()
        window_seconds = 60 * int(stack.parameters["MassFailureWindowMinutes"])
        try:
            with counting_dynamodb_writes() as counter, quiet_stdout():
                storm_started = time.time()
                invoke = stack.invoke
                node = run_phase(lambda event: invoke("HyperPodEventFunction", event), node_plan, counter)
                storm_ended = time.time()
                sns = run_phase(
                    lambda event: stack.invoke("ControllerStatusFunction", event), notification_plan, counter
                )
            subjects = _drain(queue)
        finally:
            executions = _stop_running(state_machine)
    node_report = phase_report(node, put_item_ms, table_names)
    sns_report = phase_report(sns, put_item_ms, table_names)
    node_report["dynamodb_writes"]["note"] = node_writes_note(node_report)
    sns_report["dynamodb_writes"]["note"] = sns_writes_note(sns_report, "IdempotencyTable")
    # One notice per mass-failure window by design: a storm crossing a window boundary may give two.
    windows = int(storm_ended // window_seconds) - int(storm_started // window_seconds) + 1
    return {
        "node_events": node_report,
        "sns_notifications": sns_report,
        "put_item_ms": round(put_item_ms, 3),
        "executions_started": at_most(
            len(executions), 1, "" if len(executions) <= 1 else "more than one run for one cluster"
        ),
        "notifications_sent": at_most(
            len(subjects),
            windows,
            ""
            if windows == 1
            else f"the storm spanned {windows} mass-failure windows: one notice each is allowed",
            subjects=subjects,
            mass_failure_windows=windows,
        ),
    }
