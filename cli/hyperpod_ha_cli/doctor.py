"""``hyperpod-ha doctor --cluster NAME``: the first-hour check after a deploy, one line a check,
each failed one with its fix.

In order, each later check using what the earlier found: the credentials (STS), the stack and its
parameters (CloudFormation: complete, watching this cluster), the cluster and its controller
group (SageMaker), each controller reachable through Session Manager (StartSession, then
TerminateSession at once: nothing runs on the node), the account's Session Manager preferences
(a KMS key there ends every session of the stack's own client), the notification topic's
subscriptions (none confirmed: nobody is told), the failover topic's subscription to the stack,
the watchdog's schedule, the last verdict's age, and an operator's silence in force (a warning:
nothing pages until it ends). Read-only but for that one session per
controller. Exit 0 every check passed, 1 one failed (each says why and what to do), 2 usage
error (no such stack, another cluster's), 3 runtime error.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from hyperpod_ha.controllers.discovery import discover_controllers
from hyperpod_ha.human_time import ago, iso_utc
from hyperpod_ha.silences import Silences
from hyperpod_ha.status_records import StatusRecords
from hyperpod_ha_cli.errors import NOT_VERIFIED, VERIFIED
from hyperpod_ha_cli.options import seconds_within
from hyperpod_ha_cli.output import result_stream
from hyperpod_ha_cli.stacks import (
    KEYS,
    Target,
    add_target_options,
    aws_error_code,
    connect,
    resolve_target,
    stack_for_cluster,
)

PASS, WARN, FAIL = "ok", "warn", "FAIL"
# The account's Session Manager preferences live in this document (per region).
PREFERENCES_DOCUMENT = "SSM-SessionManagerRunShell"
_COMPLETE = ("CREATE_COMPLETE", "UPDATE_COMPLETE", "IMPORT_COMPLETE")


@dataclass(frozen=True)
class Check:
    name: str
    outcome: str  # ok, warn, FAIL
    detail: str
    fix: str = ""

    def to_json(self) -> dict[str, str]:
        return {"check": self.name, "outcome": self.outcome, "detail": self.detail, "fix": self.fix}


def add_parser(commands: Any) -> None:
    """`hyperpod-ha doctor`: its arguments."""
    doctor = commands.add_parser("doctor", help="check a deployed stack, each check with its fix")
    add_target_options(doctor)
    doctor.add_argument(
        "--max-age",
        type=seconds_within(60, 30 * 86400),
        default=3600,
        metavar="DURATION",
        help="the last verdict may be this old (default 1h)",
    )


def run_doctor(args: argparse.Namespace) -> int:
    flags = {key: getattr(args, key, None) for key in KEYS}
    target = resolve_target(args.cluster, flags)
    connect(target)
    checks = [_credentials()]
    if checks[0].outcome == PASS:
        outputs = stack_for_cluster(target)  # no stack, another cluster's: a usage error, exit 2
        checks += [_stack(target), *diagnose(target, outputs, args.max_age)]
    return _report(target, checks, args.json)


def _report(target: Target, checks: list[Check], as_json: bool) -> int:
    out = result_stream()
    failed = any(check.outcome == FAIL for check in checks)
    if as_json:
        result = {"stack": target.to_json(), "checks": [c.to_json() for c in checks], "passed": not failed}
        print(json.dumps({**result, "exit_code": NOT_VERIFIED if failed else VERIFIED}, indent=2), file=out)
    else:
        print(f"cluster {target.cluster}, {target.where()}", file=out)
        for check in checks:
            print(f"{check.outcome:4}  {check.name}: {check.detail}", file=out)
            if check.fix and check.outcome != PASS:
                print(f"      fix: {check.fix}", file=out)
    out.flush()
    return NOT_VERIFIED if failed else VERIFIED


def diagnose(target: Target, outputs: Mapping[str, str], max_age: int) -> list[Check]:
    """Every check after the stack's own; one that cannot ask AWS fails with the error's code."""
    steps: list[tuple[str, Callable[[], list[Check]]]] = [
        ("controllers", lambda: _controllers(target, outputs)),
        ("session preferences", lambda: [_session_preferences()]),
        ("notification topic", lambda: [_notification_topic(outputs)]),
        ("failover topic", lambda: [_failover_subscription(target, outputs)]),
        ("watchdog", lambda: [_watchdog(outputs)]),
        ("last verdict", lambda: [_last_verdict(target, outputs, max_age)]),
        ("slurm triggers", lambda: [_slurm_triggers(target, outputs)]),
        ("silence", lambda: [_silence(target, outputs)]),
        ("paging", lambda: [paging(target.stack_name)]),
    ]
    checks: list[Check] = []
    for name, step in steps:
        try:
            checks += step()
        except (ClientError, BotoCoreError) as error:
            fix = "your role needs the read permissions docs/on-call.md lists for doctor"
            checks.append(Check(name, FAIL, f"AWS refused: {_why(error)}", fix))
    return checks


def _why(error: Exception) -> str:
    return aws_error_code(error) if isinstance(error, ClientError) else type(error).__name__


def _credentials() -> Check:
    """Who the command runs as: the first thing that fails on a new laptop."""
    try:
        identity = boto3.client("sts").get_caller_identity()
    except (ClientError, BotoCoreError) as error:
        fix = "`aws sso login`, or give --profile (or AWS_PROFILE) with credentials for the stack's account"
        return Check("credentials", FAIL, f"none usable: {_why(error)}", fix)
    return Check("credentials", PASS, f"{identity['Arn']} (account {identity['Account']})")


def _stack(target: Target) -> Check:
    stack = boto3.client("cloudformation").describe_stacks(StackName=target.stack_name)["Stacks"][0]
    status = stack["StackStatus"]
    if status not in _COMPLETE:
        return Check(
            "stack",
            FAIL,
            f"{target.stack_name} is {status}",
            "wait for the deploy to end, or read its events: aws cloudformation describe-stack-events "
            f"--stack-name {target.stack_name} --region {_region()}",
        )
    return Check("stack", PASS, f"{target.stack_name} {status}, watches {target.cluster}")


def _region() -> str:
    return str(boto3.client("sts").meta.region_name)


def _controllers(target: Target, outputs: Mapping[str, str]) -> list[Check]:
    group = outputs.get("ControllerGroupName", "controller-machine")
    try:
        found = discover_controllers(boto3.client("sagemaker"), target.cluster, group)
    except ClientError as error:
        fix = f"is the cluster {target.cluster} in {_region()}? (aws sagemaker describe-cluster)"
        return [Check("cluster", FAIL, f"DescribeCluster refused: {aws_error_code(error)}", fix)]
    except Exception as error:  # the runtime's ControllerGroupNotFound and its kin: say which
        fix = "redeploy with the cluster's controller group as ControllerGroupName"
        return [Check("cluster", FAIL, str(error), fix)]
    checks = [
        Check("cluster", PASS, f"{found.cluster_status}, controller group {group}: {len(found.controllers)}")
    ]
    if len(found.controllers) < 2:
        checks.append(
            Check("controllers", FAIL, f"{len(found.controllers)} in group {group}: no failover is possible")
        )
    ssm = boto3.client("ssm")
    # The stack's own read-only probe document, as the stack opens its sessions; ended before the
    # data channel's handshake, so nothing runs on the node.
    document = outputs.get("ControllerProbeDocumentName") or PREFERENCES_DOCUMENT
    for controller in found.controllers:
        label = f"session manager {controller.hostname or '-'} ({controller.instance_id})"
        try:
            session = ssm.start_session(Target=controller.target, DocumentName=document)
            ssm.terminate_session(SessionId=session["SessionId"])
            checks.append(Check(label, PASS, "reachable (a session opened and ended at once)"))
        except ClientError as error:
            checks.append(Check(label, FAIL, f"StartSession refused: {_detail(error)}", _SESSION_FIXES))
    return checks


_SESSION_FIXES = (
    "TargetNotConnected: the node's SSM agent is not connected (node down, no route to SSM); "
    "AccessDenied: your role needs ssm:StartSession on the node and the stack's probe document, "
    "and ssm:TerminateSession"
)


def _detail(error: ClientError) -> str:
    message = str(error.response.get("Error", {}).get("Message", ""))[:200]
    return f"{aws_error_code(error)} {message}".strip()


def _session_preferences() -> Check:
    """The account's preferences: a KMS key there makes every session ask for KMS encryption,
    which the stack's own Session Manager client answers "failed" (docs/limitations.md)."""
    ssm = boto3.client("ssm")
    try:
        content = json.loads(ssm.get_document(Name=PREFERENCES_DOCUMENT)["Content"])
    except ClientError as error:
        if aws_error_code(error) == "InvalidDocument":
            return Check("session preferences", PASS, "the account's defaults (no KMS key)")
        raise
    key = str((content.get("inputs") or {}).get("kmsKeyId") or "")
    if key:
        return Check(
            "session preferences",
            FAIL,
            f"sessions are encrypted with KMS key {key}: the stack's Session Manager client cannot",
            "deploy with CommandTransport=run-command, or clear the KMS key in Session Manager's preferences",
        )
    return Check("session preferences", PASS, "no KMS key")


def _notification_topic(outputs: Mapping[str, str]) -> Check:
    topic = outputs.get("NotificationTopicArn", "")
    if not topic:
        return Check("notification topic", FAIL, "the stack has no NotificationTopicArn output", "redeploy")
    confirmed = [
        s
        for page in boto3.client("sns").get_paginator("list_subscriptions_by_topic").paginate(TopicArn=topic)
        for s in page.get("Subscriptions", [])
        if s.get("SubscriptionArn", "").startswith("arn:")  # "PendingConfirmation" is not one yet
    ]
    if not confirmed:
        return Check(
            "notification topic",
            FAIL,
            f"no confirmed subscription on {topic}: nobody is told",
            f"aws sns subscribe --topic-arn {topic} --protocol email --notification-endpoint <you> "
            "(and confirm it), or deploy with NotificationEmail",
        )
    protocols = ", ".join(sorted({str(s.get("Protocol")) for s in confirmed}))
    return Check("notification topic", PASS, f"{len(confirmed)} confirmed ({protocols})")


def _failover_subscription(target: Target, outputs: Mapping[str, str]) -> Check:
    topic = outputs.get("SlurmFailoverTopicArn", "")
    function = _resource(target.stack_name, "ControllerStatusFunction")
    # A Lambda endpoint is the function's ARN (arn:...:function:<name>[:<alias>]).
    endpoints = {
        str(s.get("Endpoint", "")).rsplit(":function:", 1)[-1].split(":")[0]
        for page in boto3.client("sns").get_paginator("list_subscriptions_by_topic").paginate(TopicArn=topic)
        for s in page.get("Subscriptions", [])
        if s.get("Protocol") == "lambda"
    }
    if function and function in endpoints:
        return Check("failover topic", PASS, f"{topic} delivers to {function}")
    return Check(
        "failover topic",
        FAIL,
        f"{topic} has no subscription of the stack's ControllerStatusFunction",
        "is SlurmFailoverTopicArn the topic the lifecycle scripts publish to? Redeploy with the right one",
    )


def _resource(stack_name: str, logical_id: str) -> str:
    pages = (
        boto3.client("cloudformation").get_paginator("list_stack_resources").paginate(StackName=stack_name)
    )
    for page in pages:
        for resource in page["StackResourceSummaries"]:
            if resource["LogicalResourceId"] == logical_id:
                return str(resource.get("PhysicalResourceId", ""))
    return ""


def _watchdog(outputs: Mapping[str, str]) -> Check:
    name = outputs.get("WatchdogScheduleName", "")
    if not name:
        return Check(
            "watchdog", WARN, "no schedule (WatchdogRateMinutes is 0): failures that send no event go unseen"
        )
    schedule = boto3.client("scheduler").get_schedule(Name=name)
    if schedule.get("State") != "ENABLED":
        return Check(
            "watchdog",
            FAIL,
            f"schedule {name} is {schedule.get('State')}",
            f"aws scheduler update-schedule --name {name} --state ENABLED ...",
        )
    return Check("watchdog", PASS, f"schedule {name} {schedule.get('ScheduleExpression')}")


# The verdict's reasons about the Slurm triggers (hyperpod_ha.verdict.slurm_triggers).
_TRIGGER_REASONS = ("Slurm triggers missing", "the Slurm trigger program ")


def _slurm_triggers(target: Target, outputs: Mapping[str, str]) -> Check:
    """SlurmTriggers, whether anything installs them, and what the last verdict said of them."""
    stack = boto3.client("cloudformation").describe_stacks(StackName=target.stack_name)["Stacks"][0]
    given = {p["ParameterKey"]: p.get("ParameterValue", "") for p in stack.get("Parameters", [])}
    records = StatusRecords(boto3.client("dynamodb"), outputs["StateTableName"]).read(target.cluster)
    reasons = (records.get("verdict") or {}).get("reasons") or []
    return slurm_triggers_check(
        given.get("SlurmTriggers") or "on",
        bool(outputs.get("WatchdogScheduleName")),
        [str(reason) for reason in reasons],
        outputs.get("SlurmTriggersDocumentName", "<SlurmTriggersDocumentName>"),
        outputs.get("SlurmFailoverTopicArn", "<SlurmFailoverTopicArn>"),
    )


def slurm_triggers_check(
    setting: str, watchdog: bool, reasons: list[str], document: str, topic: str
) -> Check:
    """Pure: never a failure (the verdict weighs the triggers), a warning when nobody installs them
    or the last verdict found them missing."""
    if setting != "on":
        return Check("slurm triggers", PASS, "off (SlurmTriggers): none installed, none looked for")
    install = (
        f"aws ssm start-session --target <controller target> --document-name {document} "
        f"--parameters mode=install,topicArn={topic}"
    )
    if not watchdog:
        why = "on, but the watchdog is off (WatchdogRateMinutes 0): nobody installs them"
        return Check("slurm triggers", WARN, why, f"install them on each controller: {install}")
    found = [reason for reason in reasons if reason.startswith(_TRIGGER_REASONS)]
    if found:
        detail = f"the last verdict: {found[0]}"
        return Check("slurm triggers", WARN, detail, f"the watchdog's next tick installs them, or: {install}")
    return Check("slurm triggers", PASS, "on: the watchdog installs them and re-checks them at each tick")


_PAGING = ("PagingTriggerPipe", "PagingResolvePipe", "PagingDeadLetterQueue")
# A pipe on its way to RUNNING (just deployed, or updated): not yet a failure.
_PIPE_ON_ITS_WAY = ("CREATING", "STARTING", "UPDATING")


def paging(stack_name: str) -> Check:
    """With PagingService: both pipes running and no page left in the paging dead-letter queue."""
    found: dict[str, str] = {}
    pages = (
        boto3.client("cloudformation").get_paginator("list_stack_resources").paginate(StackName=stack_name)
    )
    for page in pages:
        for resource in page["StackResourceSummaries"]:
            if resource["LogicalResourceId"] in _PAGING:
                found[resource["LogicalResourceId"]] = str(resource.get("PhysicalResourceId", ""))
    if not found:
        return Check("paging", PASS, "not configured (PagingService none): the topic's subscribers only")
    pipes = boto3.client("pipes")
    for logical_id in _PAGING[:2]:
        name = found.get(logical_id, "")
        state = str(pipes.describe_pipe(Name=name).get("CurrentState")) if name else "missing"
        if state in _PIPE_ON_ITS_WAY:
            return Check("paging", WARN, f"pipe {name} is {state}", "check again in a minute")
        if state != "RUNNING":
            return Check(
                "paging",
                FAIL,
                f"{logical_id} {name} is {state}: nothing pages",
                f"aws pipes describe-pipe --name {name} (StateReason); aws pipes start-pipe --name {name}",
            )
    queue = found.get("PagingDeadLetterQueue", "")
    waiting = boto3.client("sqs").get_queue_attributes(
        QueueUrl=queue, AttributeNames=["ApproximateNumberOfMessages"]
    )
    refused = int(waiting["Attributes"].get("ApproximateNumberOfMessages", "0"))
    if refused:
        return Check(
            "paging",
            FAIL,
            f"{refused} page(s) the paging service never took, in {queue}",
            f"read them (aws sqs receive-message --queue-url {queue}), check the key in PagingSecretArn, "
            "then move them back with aws sqs start-message-move-task",
        )
    return Check("paging", PASS, "both pipes running, no refused page")


def _silence(target: Target, outputs: Mapping[str, str], now: float | None = None) -> Check:
    """An operator's silence in force: nobody is paged until it ends (a warning, not a failure:
    someone meant it)."""
    silences = Silences(boto3.client("dynamodb"), outputs["StateTableName"])
    silence = silences.read(target.cluster).in_force(time.time() if now is None else now)
    if silence is None:
        return Check("silence", PASS, "none in force: the stack pages")
    return Check(
        "silence",
        WARN,
        f"nothing pages and nothing is restored until {iso_utc(silence.until)} "
        f"({silence.started_by}: {silence.reason})",
        f"hyperpod-ha silence end --cluster {target.cluster} --stack-name {target.stack_name}",
    )


def _last_verdict(
    target: Target, outputs: Mapping[str, str], max_age: int, now: float | None = None
) -> Check:
    records = StatusRecords(boto3.client("dynamodb"), outputs["StateTableName"]).read(target.cluster)
    verdict = records.get("verdict")
    now = time.time() if now is None else now
    start = f"hyperpod-ha runbook start --cluster {target.cluster} --stack-name {target.stack_name} --follow"
    if not verdict or not verdict.get("recorded_at"):
        return Check("last verdict", FAIL, "none recorded yet", f"run a verification now: {start}")
    age = now - float(verdict["recorded_at"])
    seen = f"{verdict.get('verdict')}, {ago(age)}"
    if age > max_age:
        return Check(
            "last verdict",
            FAIL,
            f"{seen}: older than {ago(max_age).removesuffix(' ago')}",
            f"is the watchdog running? {start}",
        )
    return Check("last verdict", PASS, seen)
