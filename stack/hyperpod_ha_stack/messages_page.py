"""docs/messages.md, written by ``make generate`` from the samples of
:mod:`hyperpod_ha_stack.message_samples` (``tests/unit/topic_messages/test_message_samples.py``
fails while it is stale): the one form, the attributes, the filter policies, the kinds, and every sample."""

from __future__ import annotations

import json

from hyperpod_ha.topic_messages import kinds
from hyperpod_ha_stack.message_samples import FILTER_POLICIES, SAMPLES


def page() -> str:
    """docs/messages.md."""
    lines = [
        "# What on-call receives",
        "",
        "<!-- Written by `make generate` (stack/hyperpod_ha_stack/messages_page.py) from the samples of",
        "     message_samples.py, made by the real message builders: do not edit by hand. -->",
        "",
        "Every message hyperpod-ha publishes to its notification topic (the stack's output",
        "`NotificationTopicArn`) has one form: made by `hyperpod_ha.topic_messages.message`, refused",
        "by its `publish` when not in that form, and sent through the one redaction path.",
        "",
        "- **Subject**: `[hyperpod-ha] <cluster>: <what happened> (sev N)`, ASCII, one line, at most",
        "  99 characters (only *what happened* is ever cut).",
        "- **Body**: plain text: what happened, when and what triggered the run, every controller by",
        "  name, instance id and address, every reason, and the next steps (the session command for",
        "  each controller, what to look at, the runbook command, console links). Times read as",
        "  `1 d 20 h ago (2026-11-29 23:30 UTC)`. At most 252 KiB: a long list is cut at its end",
        "  with `… N more`.",
        "- **Message attributes** (String), for subscription filter policies:",
        "",
        "| attribute | values | on |",
        "| --- | --- | --- |",
        "| `cluster` | the HyperPod cluster's name | every message |",
        f"| `kind` | {', '.join(f'`{name}`' for name in kinds.KINDS)} | every message |",
        "| `severity` | `1` critical, `2` high, `3` medium, `4` low (OpsCenter's scale) | every message |",
        "| `event` | `opened`, `reminder` (still open, at most once per `ReminderMinutes`), `resolved`, "
        "`notice` | every message |",
        "| `dedup_key` | `hyperpod-ha:<cluster>:<problem>`: one per cluster and problem (the OpsItem's "
        "dedup string; an alarm's is `hyperpod-ha:<cluster>:alarm:<alarm>`); a resolution carries the key "
        "of the problem it resolves | every message |",
        "| `level` | `critical`, `error`, `warning`, `info`: the severity as paging services take it "
        "(PagerDuty's `payload.severity`; [on-call](on-call.md#paging)) | every message |",
        "| `verdict` | `HEALTHY`, `FAILED_OVER`, `DEGRADED`, `SPLIT_BRAIN`, `DOWN`, `UNKNOWN` "
        "| where there is one |",
        "",
        "A resolution (`recovered`, an alarm back to OK) carries the severity of what it resolves, so",
        "a subscription that received the opening receives its end; `recovered` is one message per",
        "problem resolved, so that a paging service keyed on `dedup_key` resolves what it triggered.",
        "The only messages without these attributes are those of the notice path's own alarms",
        "(`NoticeErrorsAlarm`, `NoticeThrottlesAlarm`, `NoticeDeadLetterQueueAlarm`): they cannot go",
        "through the function they watch, so CloudWatch publishes its raw JSON.",
        "",
        "## Subscription filter policies",
        "",
        "E-mail gets everything (no filter policy). Paging gets severity 1 and 2, and the notice",
        "path's own alarms (no `severity` attribute):",
        "",
        "```json",
        json.dumps(FILTER_POLICIES["paging"]),
        "```",
        "",
        "A chat channel without the reminders (a condition on an attribute never matches a message",
        "without it, hence the notice path's own alarms named apart in both):",
        "",
        "```json",
        json.dumps(FILTER_POLICIES["chat"]),
        "```",
        "",
        "Set one with `aws sns subscribe --topic-arn <NotificationTopicArn> --protocol ... "
        '--attributes \'{"FilterPolicy": "..."}\'`',
        "(`tests/functions/test_filter_policies.py` checks both against the messages really sent).",
        "",
        "## Kinds",
        "",
        "| kind | severity | headline |",
        "| --- | --- | --- |",
        *(
            f"| `{row.name}` | {row.severity or 'the verdict' + chr(39) + 's'} | {row.headline} |"
            for row in kinds.KINDS.values()
        ),
        "",
        "## Samples",
        "",
        "Made by the builders with fixed inputs (the time is 2026-12-01 10:00 UTC).",
    ]
    for sample in SAMPLES:
        message = sample.make()
        attributes = " ".join(f"{name}={value}" for name, value in message.attributes.items())
        lines += [
            "",
            f"### {sample.title}",
            "",
            f"When: {sample.when}.",
            "",
            f"Subject: `{message.subject}`",
            "",
            f"Attributes: `{attributes}`",
            "",
            "```text",
            message.body.rstrip(),
            "```",
        ]
    return "\n".join(lines) + "\n"


def written(_current: str) -> str:
    """What ``make generate`` writes to docs/messages.md, whatever it held."""
    return page()
