"""Paging (issue 40): the template's opt-in PagingService on the embedded stack, each message the
project publishes carried by the SNS subscriptions, the queues and the pipes' own input templates
(:mod:`hyperpod_ha_dev.embedded.pipes`, since moto runs no pipe) to a real HTTP receiver on
loopback, standing in for PagerDuty's Events v2 (``tests/fakes/paging_service.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from hyperpod_ha import topic_messages
from hyperpod_ha.topic_messages import TopicMessage
from hyperpod_ha_stack import message_samples
from tests.conftest import FAST_RUNS, ROOT
from tests.fakes.paging_service import PagingService, paging_service

ROUTING_KEY = "R0UTINGKEY0123456789abcdefABCDEF"
WEBHOOK_KEY = "Bearer webhook-token-0123456789"


def _paging_stack(service: str, key: str, **extra: str) -> Iterator[tuple[Any, PagingService]]:
    from hyperpod_ha_dev.embedded.site import create_site, embedded_aws
    from hyperpod_ha_dev.embedded.stack import create_stack

    with embedded_aws():
        site = create_site()
        secret = boto3.client("secretsmanager").create_secret(Name=f"{service}-key", SecretString=key)["ARN"]
        site.extra_parameters.update(FAST_RUNS, PagingService=service, PagingSecretArn=secret, **extra)
        stack = create_stack(ROOT, site.stack_parameters())
        with paging_service() as receiver:
            # The destination as deployed, its endpoint pointed at the receiver on loopback.
            boto3.client("events").update_api_destination(
                Name=stack.ref("PagingDestination"), InvocationEndpoint=receiver.url
            )
            yield stack, receiver


@pytest.fixture
def pagerduty() -> Iterator[tuple[Any, PagingService]]:
    yield from _paging_stack("pagerduty", ROUTING_KEY)


@pytest.fixture
def webhook() -> Iterator[tuple[Any, PagingService]]:
    yield from _paging_stack("webhook", WEBHOOK_KEY, PagingWebhookUrl="https://hooks.example.com/hyperpod")


def publish(stack: Any, message: TopicMessage) -> None:
    topic_messages.publish(boto3.client("sns"), stack.outputs["NotificationTopicArn"], message)


def deliver(stack: Any) -> tuple[list[Any], list[Any]]:
    """Both pipes drained once: (what the trigger pipe delivered, what the resolve pipe did)."""
    return stack.deliver_pipe("PagingTriggerPipe"), stack.deliver_pipe("PagingResolvePipe")


def test_an_opening_triggers_a_reminder_adds_no_page_and_the_resolution_resolves(
    pagerduty: tuple[Any, PagingService],
) -> None:
    stack, service = pagerduty
    opened = message_samples.down()
    publish(stack, opened)
    triggered, resolved = deliver(stack)
    assert [d.reason for d in triggered] == [""]
    assert resolved == []
    (request,) = service.requests
    assert request.path == "/v2/enqueue"
    assert request.body == {
        "event_action": "trigger",
        "dedup_key": "hyperpod-ha:ml-cluster:DOWN",
        "client": "hyperpod-ha",
        "payload": {
            "summary": opened.subject,
            "source": "ml-cluster",
            "severity": "critical",
            "timestamp": request.body["payload"]["timestamp"],
            "component": "slurmctld",
            "group": "ml-cluster",
            "class": "DOWN",
            "custom_details": {
                "event": "opened",
                "severity": "1",
                "sns_message_id": request.body["payload"]["custom_details"]["sns_message_id"],
            },
        },
        # From the connection's secret-held body parameter, never from the template.
        "routing_key": ROUTING_KEY,
    }
    assert request.body["payload"]["timestamp"].endswith("Z")

    publish(stack, message_samples.down_reminder())
    triggered, resolved = deliver(stack)
    assert len(triggered) == 1
    assert resolved == []
    reminder = service.requests[-1].body
    assert (reminder["event_action"], reminder["dedup_key"]) == ("trigger", "hyperpod-ha:ml-cluster:DOWN")
    assert service.pages == ["hyperpod-ha:ml-cluster:DOWN"]  # the same alert: no second page

    recovered = message_samples.recovered()
    assert recovered.attributes["dedup_key"] == opened.attributes["dedup_key"]
    publish(stack, recovered)
    triggered, resolved = deliver(stack)
    assert triggered == []
    assert [d.reason for d in resolved] == [""]
    assert service.requests[-1].body == {
        "event_action": "resolve",
        "dedup_key": "hyperpod-ha:ml-cluster:DOWN",
        "routing_key": ROUTING_KEY,
    }
    assert service.alerts == {"hyperpod-ha:ml-cluster:DOWN": "resolved"}
    assert service.pages == ["hyperpod-ha:ml-cluster:DOWN"]  # a resolution is never a new page


def test_notices_and_raw_messages_page_nobody(pagerduty: tuple[Any, PagingService]) -> None:
    stack, service = pagerduty
    publish(stack, message_samples.verified())
    publish(stack, message_samples.drill())
    # The notice path's own alarm, as CloudWatch publishes it: raw JSON, no attributes.
    boto3.client("sns").publish(
        TopicArn=stack.outputs["NotificationTopicArn"],
        Subject="ALARM: hyperpod-ha.NoticeErrorsAlarm",
        Message=json.dumps({"AlarmName": "hyperpod-ha.NoticeErrorsAlarm"}),
    )
    assert deliver(stack) == ([], [])
    assert service.requests == []


def test_each_alarm_is_its_own_page_and_its_own_resolve(pagerduty: tuple[Any, PagingService]) -> None:
    stack, service = pagerduty
    firing = message_samples.alarm()
    publish(stack, firing)
    deliver(stack)
    key = firing.attributes["dedup_key"]
    assert key.startswith("hyperpod-ha:ml-cluster:alarm:")
    assert key.endswith("WatchdogErrorsAlarm")
    assert service.alerts == {key: "triggered"}


def test_a_long_message_pages_with_a_bounded_request_and_its_text_escaped(
    pagerduty: tuple[Any, PagingService],
) -> None:
    stack, service = pagerduty
    long = topic_messages.message(
        cluster="ml-cluster",
        kind="DOWN",
        event="opened",
        what='quote " backslash \\ tab\t',
        body=["x" * 1000] * 240,  # about 240 KB: SNS takes it, the page does not carry it
        verdict="DOWN",
    )
    publish(stack, long)
    (delivered,) = stack.deliver_pipe("PagingTriggerPipe")
    assert delivered.reason == ""
    (request,) = service.requests
    assert request.body["payload"]["summary"] == topic_messages.subject_line(long.subject)
    assert len(json.dumps(request.body)) < 2048


def test_a_refusing_service_leaves_the_page_queued_then_dead_lettered(
    pagerduty: tuple[Any, PagingService],
) -> None:
    stack, service = pagerduty
    service.answer = 500
    publish(stack, message_samples.down())
    (first,) = stack.deliver_pipe("PagingTriggerPipe")
    assert (first.status, first.reason.startswith("HTTP 500")) == (500, True)
    assert service.pages == []
    sqs = boto3.client("sqs")
    dead = sqs.get_queue_url(QueueName=stack.ref("PagingDeadLetterQueue").rsplit("/", 1)[-1])["QueueUrl"]
    for _ in range(12):  # the queue's maxReceiveCount is 10
        stack.deliver_pipe("PagingTriggerPipe")
    (kept,) = sqs.receive_message(QueueUrl=dead, MaxNumberOfMessages=10)["Messages"]
    assert (
        json.loads(kept["Body"])["MessageAttributes"]["dedup_key"]["Value"] == "hyperpod-ha:ml-cluster:DOWN"
    )


def test_a_message_the_subscriptions_never_pass_is_refused_with_its_reason(
    pagerduty: tuple[Any, PagingService],
) -> None:
    stack, service = pagerduty
    sqs = boto3.client("sqs")
    queue = stack.ref("PagingTriggerQueue")
    sqs.send_message(QueueUrl=queue, MessageBody="not the SNS envelope")
    sqs.send_message(QueueUrl=queue, MessageBody=json.dumps({"Subject": "no attributes"}))
    reasons = sorted(d.reason for d in stack.deliver_pipe("PagingTriggerPipe"))
    assert reasons == [
        "the input template's <$.body.MessageAttributes.dedup_key.Value> is not in the message",
        "the input template's <$.body.MessageAttributes.dedup_key.Value> is not in the message",
    ]
    assert service.requests == []


def test_the_webhook_gets_every_event_with_its_key_and_the_secret_header(
    webhook: tuple[Any, PagingService],
) -> None:
    stack, service = webhook
    publish(stack, message_samples.down())
    publish(stack, message_samples.recovered())
    triggered, resolved = deliver(stack)
    assert len(triggered) == len(resolved) == 1
    opened, recovered = (request.body for request in service.requests)
    assert (opened["event"], recovered["event"]) == ("opened", "resolved")
    assert opened["dedup_key"] == recovered["dedup_key"] == "hyperpod-ha:ml-cluster:DOWN"
    assert {request.headers["Authorization"] for request in service.requests} == {WEBHOOK_KEY}
    assert "routing_key" not in opened


def test_doctor_says_whether_the_pipes_run_and_pages_were_refused(
    pagerduty: tuple[Any, PagingService],
) -> None:
    from hyperpod_ha_cli.doctor import FAIL, PASS, WARN, paging

    stack, service = pagerduty
    first = paging(stack.name)  # a pipe just created is CREATING, then RUNNING
    assert first.outcome in (PASS, WARN)
    assert paging(stack.name).outcome == PASS
    service.answer = 500
    publish(stack, message_samples.down())
    for _ in range(11):  # the queue's maxReceiveCount is 10
        stack.deliver_pipe("PagingTriggerPipe")
    refused = paging(stack.name)
    assert (refused.outcome, refused.detail.startswith("1 page(s) the paging service never took")) == (
        FAIL,
        True,
    )
    boto3.client("pipes").stop_pipe(Name=stack.ref("PagingResolvePipe"))
    stopped = paging(stack.name)
    assert stopped.outcome == FAIL
    assert stopped.detail.startswith("PagingResolvePipe ")
    assert stopped.fix.endswith(f"aws pipes start-pipe --name {stack.ref('PagingResolvePipe')}")
