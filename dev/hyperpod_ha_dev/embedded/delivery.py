"""Where moto does not deliver to our handlers by itself, deliver following the template's wiring.

- Lambda invoke (moto's no-Docker backend answers with a canned result): routed to the real
  handler in process. A handler error is reported as Lambda does: the
  ``x-amz-function-error`` header and ``{"errorType", "errorMessage"}``, so Step Functions'
  Retry and Catch match on the error name.
- SNS -> Lambda subscriptions: moto sends a fixed MessageId and TopicArn; we send the real
  ones, asynchronously-invoked semantics included (retries, then the function's DLQ).
- EventBridge -> Lambda targets: moto has no Lambda target; we invoke the function with the
  event, with the same retry and dead-letter semantics.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hyperpod_ha_dev.embedded import fsx, opscenter
from hyperpod_ha_dev.embedded.functions import FunctionError, FunctionSpec, invoke
from hyperpod_ha_dev.embedded.patching import Patch, applied

_functions: dict[str, FunctionSpec] = {}


@dataclass(frozen=True)
class Delivery:
    """One asynchronous delivery (SNS, EventBridge) to a function, and what came of it."""

    at: float
    function: str
    event: Any
    result: Any
    error: str | None


# What SNS and EventBridge delivered, in order (the simulation's timeline reads it).
deliveries: list[Delivery] = []


def register(spec: FunctionSpec) -> None:
    _functions[spec.arn] = spec
    _functions[spec.name] = spec


def function_for(name_or_arn: str) -> FunctionSpec | None:
    spec = _functions.get(name_or_arn)
    if spec is None and name_or_arn.startswith("arn:"):
        parts = name_or_arn.split(":")
        spec = _functions.get(parts[6]) if len(parts) >= 7 else None
    return spec


def invoke_async(spec: FunctionSpec, event: Any) -> Any:
    """Asynchronous invocation semantics: retries, then the dead-letter queue; never raises."""
    last: FunctionError | None = None
    for _ in range(spec.max_retries + 1):
        try:
            result = invoke(spec, event)
        except FunctionError as error:
            last = error
            continue
        deliveries.append(Delivery(time.time(), spec.logical_id, event, result, None))
        return result
    deliveries.append(Delivery(time.time(), spec.logical_id, event, None, str(last)))
    if spec.dead_letter_queue_arn and last is not None:
        import boto3

        queue = spec.dead_letter_queue_arn.split(":")
        sqs = boto3.client("sqs", region_name=queue[3])
        url = sqs.get_queue_url(QueueName=queue[5], QueueOwnerAWSAccountId=queue[4])["QueueUrl"]
        sqs.send_message(
            QueueUrl=url,
            MessageBody=json.dumps(event),
            MessageAttributes={
                "ErrorCode": {"DataType": "String", "StringValue": last.error_type},
                "ErrorMessage": {"DataType": "String", "StringValue": last.error_message[:256] or "-"},
            },
        )
    return None


@contextlib.contextmanager
def patched() -> Iterator[None]:
    """moto, patched for as long as the embedded stack is in use (see the module's docstring)."""
    from hyperpod_ha_dev.embedded import cluster_records

    with applied(
        [
            _route_lambda_invoke(),
            _deliver_sns_to_lambda(),
            _deliver_events_to_lambda(),
            cluster_records.node_addresses(),
            cluster_records.cluster_events(),
            cluster_records.orchestrator(),
            cluster_records.node_reboots(),
            *opscenter.patches(),
            *fsx.patches(),
        ]
    ):
        yield


def _route_lambda_invoke() -> Patch:
    from moto.awslambda_simple.models import LambdaSimpleBackend

    fallback = LambdaSimpleBackend.invoke

    def routed(
        self: Any, function_name: str, qualifier: str | None, body: Any, headers: Any, response_headers: Any
    ) -> bytes | str | None:
        self.get_function(function_name, qualifier)  # a deleted function is not found, as in Lambda
        spec = function_for(function_name)
        if spec is None:
            return fallback(self, function_name, qualifier, body, headers, response_headers)
        event = json.loads(body) if body else {}
        if (headers or {}).get("x-amz-invocation-type") == "Event":
            invoke_async(spec, event)
            return b""
        try:
            result = invoke(spec, event)
        except FunctionError as error:
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps(error.payload()).encode()
        return json.dumps(result).encode()

    return (LambdaSimpleBackend, "invoke", routed)


def _deliver_sns_to_lambda() -> Patch:
    from moto.sns.models import Subscription

    original = Subscription.publish

    def publish(self: Any, message: str, message_id: str, subject: str | None = None, **kwargs: Any) -> None:
        spec = function_for(self.endpoint) if self.protocol == "lambda" else None
        if spec is None:
            original(self, message, message_id, subject=subject, **kwargs)
            return
        now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        record = {
            "EventVersion": "1.0",
            "EventSubscriptionArn": self.arn,
            "EventSource": "aws:sns",
            "Sns": {
                "Type": "Notification",
                "MessageId": message_id,
                "TopicArn": self.topic.arn,
                "Subject": subject,
                "Message": message,
                "Timestamp": now,
                "SignatureVersion": "1",
                "Signature": "EXAMPLE",
                "SigningCertUrl": "EXAMPLE",
                "UnsubscribeUrl": "EXAMPLE",
                "MessageAttributes": {},
            },
        }
        invoke_async(spec, {"Records": [record]})

    return (Subscription, "publish", publish)


def _deliver_events_to_lambda() -> Patch:
    from moto.events.models import Rule

    original = Rule.send_to_targets

    def send_to_targets(self: Any, original_event: Any, transform_input: bool = True) -> None:
        if not self.event_pattern.matches_event(original_event):
            return
        others = []
        for target in self.targets:
            spec = function_for(target["Arn"])
            if spec is None:
                others.append(target)
                continue
            event = copy.deepcopy(original_event)
            event.setdefault("id", str(uuid.uuid4()))
            if isinstance(event.get("time"), int | float):
                # moto keeps epoch seconds here; EventBridge delivers ISO 8601 text.
                at = dt.datetime.fromtimestamp(event["time"], dt.UTC)
                event["time"] = at.strftime("%Y-%m-%dT%H:%M:%SZ")
            invoke_async(spec, event)
        if others:
            rest = copy.copy(self)
            rest.targets = others
            original(rest, original_event, transform_input)

    return (Rule, "send_to_targets", send_to_targets)
