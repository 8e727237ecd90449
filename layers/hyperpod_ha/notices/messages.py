"""The messages of a failed rotation and of an alarm's state change, in the one form. Pure: the
event, the stack's names, the region and the clock are passed in."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from hyperpod_ha import console_links
from hyperpod_ha.human_time import utc_minute
from hyperpod_ha.notices.aws_events import AlarmChange, RotationEvent
from hyperpod_ha.topic_messages import TopicMessage, kinds, message
from hyperpod_ha.topic_messages.sections import facts, next_steps, on_call_command, when

_FUNCTION_ALARM = re.compile(r"^(?P<stem>[A-Za-z0-9]+)(?:Errors|Throttles)Alarm$")
_QUEUE_ALARM = re.compile(r"^(?P<queue>[A-Za-z0-9]+DeadLetterQueue)Alarm$")


@dataclass(frozen=True)
class Stack:
    """What a notice names of the stack: its cluster, region, alarm prefix and rotation's log."""

    cluster: str
    region: str
    alarm_prefix: str  # "<stack name>." (every alarm of the stack is named <stack>.<logical id>)
    rotation_log_group: str

    @property
    def name(self) -> str:
        return self.alarm_prefix.removesuffix(".")


def _logs(group: str, region: str) -> str:
    return f"its log: `aws logs tail {group} --since 1h --region {region}`"


def rotation_failed(event: RotationEvent, stack: Stack, now: float) -> TopicMessage:
    """Secrets Manager reports a rotation of the database secret failed (or was abandoned)."""
    abandoned = event.name == "RotationAbandoned"
    what = "abandoned (a new version was put by hand)" if abandoned else "failed"
    body = [
        f"Secrets Manager reports {event.name}: the rotation of the slurmdbd database secret {what}.",
        "",
        *facts(
            [
                ("Cluster", stack.cluster),
                ("Secret", event.secret_arn),
                ("Event", f"{event.name} ({event.event_id})"),
                ("When", when(event.time, now) or utc_minute(now)),
            ]
        ),
        "",
        "The secret's AWSCURRENT version is the one the controllers use until a rotation succeeds;",
        "a version left as AWSPENDING shows where the rotation stopped.",
        "",
        *next_steps(
            stack.cluster,
            stack.region,
            (),
            (
                f"RotateDbSecretFunction, {_logs(stack.rotation_log_group, stack.region)}",
                f"the secret's versions: `aws secretsmanager describe-secret --secret-id {event.secret_arn} "
                f"--region {stack.region}`",
                "the last rotation and roll-out: "
                f"`{on_call_command('status', stack.cluster, stack.region, stack.name)}`",
            ),
            [("Secret", console_links.secret_console_url(event.secret_arn, stack.region))],
            diagnose=False,
            stack_name=stack.name,
        ),
    ]
    return message(
        cluster=stack.cluster,
        kind="rotation-failed",
        event="notice",
        what=f"rotation of the database secret {'abandoned' if abandoned else 'failed'} ({event.name})",
        body=body,
        severity="3" if abandoned else None,
    )


# An alarm on the cluster rather than on the stack: its severity (its incident's) and where to look.
_CLUSTER_ALARMS: Final = {
    "NoStandbyReadyAlarm": (
        "3",  # as redundancy-lost: one more failure would stop the cluster, nothing has yet
        "the redundancy-lost incident and `hyperpod-ha status`: the controllers not ready and why, "
        "and the command that starts slurmctld on each",
    ),
}


def _alarm_hint(logical_id: str, stack: Stack) -> str:
    """Where to look first for what the alarm watches (the template names every alarm so)."""
    if logical_id in _CLUSTER_ALARMS:
        return _CLUSTER_ALARMS[logical_id][1]
    if match := _FUNCTION_ALARM.match(logical_id):
        function = f"{match['stem']}Function"
        return f"{function}, {_logs(f'/aws/lambda/{stack.name}-{function}', stack.region)}"
    if match := _QUEUE_ALARM.match(logical_id):
        return f"the messages in {match['queue']} (each keeps the input and why it was not handled)"
    return "the failed, timed-out or stopped executions of the state machine (Step Functions console)"


def alarm_changed(change: AlarmChange, stack: Stack, now: float) -> TopicMessage:
    """One of the stack's alarms went to ALARM, or back to OK from ALARM."""
    logical_id = change.alarm_name.removeprefix(stack.alarm_prefix)
    firing = change.state == "ALARM"
    first = (
        f"hyperpod-ha's alarm {logical_id} is {change.state}: {change.description or 'no description'}"
        if firing
        else f"hyperpod-ha's alarm {logical_id} is OK again (it was {change.previous or 'in ALARM'})."
    )
    body = [
        first,
        "",
        *facts(
            [
                ("Cluster", stack.cluster),
                ("Alarm", change.alarm_name),
                ("State", f"{change.state} (was {change.previous or 'unknown'})"),
                ("Since", when(change.time, now) or utc_minute(now)),
                ("Reason", change.reason or None),
            ]
        ),
        "",
        *next_steps(
            stack.cluster,
            stack.region,
            (),
            (_alarm_hint(logical_id, stack),) if firing else (),
            [("Alarm", console_links.alarm_console_url(change.alarm_name, stack.region))],
            diagnose=False,
            stack_name=stack.name,
        ),
    ]
    return message(
        cluster=stack.cluster,
        kind="alarm",
        event="opened" if firing else "resolved",
        what=f"alarm {logical_id} {'is ALARM' if firing else 'is OK again'}",
        body=body,
        # Each alarm is its own problem: one alarm back to OK resolves its page, not another's.
        problem=f"alarm:{logical_id}",
        severity=_CLUSTER_ALARMS[logical_id][0]
        if logical_id in _CLUSTER_ALARMS
        else kinds.severity_of("alarm"),
    )
