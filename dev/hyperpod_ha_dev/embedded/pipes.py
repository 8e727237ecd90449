"""What an EventBridge Pipe from an SQS queue to an API destination does, which moto never does
(its pipes do not run, nothing calls a destination): :func:`deliver` drains the pipe's queue once.

Each message (a batch of one, as the template's pipes take them) becomes the record Pipes reads
(``messageId``, ``body``, ``attributes``, ``messageAttributes``, ...; a JSON body parsed, so
``$.body.Subject`` reaches into the SNS envelope), the pipe's own ``InputTemplate`` (as created
from template.yaml, never a copy) is applied, and the request goes to the destination's current
endpoint (a test points it at a receiver on loopback with UpdateApiDestination) with the
connection's parameters: its API key header, and its body parameters added to the JSON body as
keys, as EventBridge adds them. A 2xx deletes the message; anything else leaves it for another
receive, and after the queue's ``maxReceiveCount`` SQS moves it to the dead-letter queue, as
with a pipe whose target keeps failing.

What the template's subscriptions never let through is refused here with its reason, and the
message stays (then goes to the dead-letter queue): a body larger than SQS takes, a template path
the record lacks, a rendered text that is not JSON.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import boto3

from hyperpod_ha.errors import HyperpodHaError
from hyperpod_ha.json_input import load_json

# SQS's (and SNS's) largest message: a pipe never reads more.
MAX_MESSAGE_BYTES: Final = 256 * 1024
# What is kept of a receiver's answer (a test reads the status, rarely the text).
MAX_ANSWER_BYTES: Final = 16 * 1024
TIMEOUT_SECONDS: Final = 10
_PLACEHOLDER = re.compile(r"<(\$(?:\.[A-Za-z0-9_/-]+|\[\d+\])*|aws\.pipes\.[a-z.-]+)>")
_STEP = re.compile(r"\.([A-Za-z0-9_/-]+)|\[(\d+)\]")


class PipeRejected(HyperpodHaError, ValueError):
    """A message the pipe could not turn into a request; the reason says why."""


@dataclass(frozen=True)
class Delivered:
    """One message of the queue and what became of it."""

    message_id: str
    status: int | None  # the endpoint's HTTP status; None when no request was made
    reason: str  # empty when the endpoint took it (2xx)
    request: dict[str, Any] | None  # the JSON body sent


def deliver(pipe_name: str, region: str | None = None) -> list[Delivered]:
    """Every message now in the pipe's source queue, delivered once as the pipe would."""
    pipes = boto3.client("pipes", region_name=region)
    pipe = pipes.describe_pipe(Name=pipe_name)
    template = str(pipe.get("TargetParameters", {}).get("InputTemplate", ""))
    if pipe.get("TargetParameters", {}).get("HttpParameters"):
        raise PipeRejected(f"{pipe_name}: the embedded pipes send no HttpParameters")
    destination = _destination(pipe["Target"], region)
    sqs = boto3.client("sqs", region_name=region)
    queue_arn = str(pipe["Source"])
    _, _, _, queue_region, account, queue_name = queue_arn.split(":")
    url = sqs.get_queue_url(QueueName=queue_name, QueueOwnerAWSAccountId=account)["QueueUrl"]
    reserved = {
        "aws.pipes.pipe-arn": pipe["Arn"],
        "aws.pipes.pipe-name": pipe_name,
        "aws.pipes.source-arn": queue_arn,
        "aws.pipes.target-arn": pipe["Target"],
    }
    delivered: list[Delivered] = []
    failed: list[str] = []  # receipt handles, made visible again once the queue is drained
    while batch := sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=1, MessageAttributeNames=["All"], AttributeNames=["All"]
    ).get("Messages", []):
        (message,) = batch
        outcome = _one(message, template, reserved, destination, queue_arn, queue_region)
        if outcome.status is not None and 200 <= outcome.status < 300:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        else:
            failed.append(message["ReceiptHandle"])
        delivered.append(outcome)
    # Back for the next drain (a real pipe retries after a while); after the queue's
    # maxReceiveCount receives, SQS moves such a message to the dead-letter queue.
    for handle in failed:
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=0)
    return delivered


@dataclass(frozen=True)
class _Destination:
    endpoint: str
    method: str
    headers: dict[str, str]
    body_parameters: dict[str, str]


def _destination(arn: str, region: str | None) -> _Destination:
    """The API destination's endpoint and its connection's parameters, read from the secret in
    which the connection keeps them (moto's, as EventBridge's)."""
    events = boto3.client("events", region_name=region)
    # arn:aws:events:<region>:<account>:api-destination/<name>/<id>
    described = events.describe_api_destination(Name=arn.split(":", 5)[5].split("/")[1])
    connection = events.describe_connection(Name=described["ConnectionArn"].split(":", 5)[5].split("/")[1])
    secret = boto3.client("secretsmanager", region_name=region).get_secret_value(
        SecretId=connection["SecretArn"]
    )
    kept = json.loads(secret["SecretString"])
    headers = {}
    if connection["AuthorizationType"] == "API_KEY":
        headers[str(kept["api_key_name"])] = str(kept["api_key_value"])
    invocation = kept.get("invocation_http_parameters") or {}
    for header in invocation.get("header_parameters", []):
        headers[str(header["key"])] = str(header["value"])
    body_parameters = {str(p["key"]): str(p["value"]) for p in invocation.get("body_parameters", [])}
    return _Destination(
        str(described["InvocationEndpoint"]), str(described["HttpMethod"]), headers, body_parameters
    )


def _one(
    message: Mapping[str, Any],
    template: str,
    reserved: dict[str, str],
    destination: _Destination,
    queue_arn: str,
    region: str,
) -> Delivered:
    message_id = str(message["MessageId"])
    try:
        record = _record(message, queue_arn, region)
        body = render(template, record, reserved) if template else json.dumps(record)
        request = load_json(body, PipeRejected, what="the rendered input template")
        if not isinstance(request, dict):
            raise PipeRejected("the rendered input template is not a JSON object")
    except PipeRejected as rejected:
        return Delivered(message_id, None, str(rejected), None)
    sent = {**request, **destination.body_parameters}
    try:
        status, answer = _post(destination, json.dumps(sent).encode())
    except PipeRejected as unreachable:
        return Delivered(message_id, None, str(unreachable), sent)
    return Delivered(message_id, status, "" if 200 <= status < 300 else f"HTTP {status}: {answer}", sent)


def _record(message: Mapping[str, Any], queue_arn: str, region: str) -> dict[str, Any]:
    """The SQS record as Pipes hands it to the input template; the body parsed when it is JSON."""
    text = str(message["Body"])
    if len(text.encode()) > MAX_MESSAGE_BYTES:
        raise PipeRejected(f"the message is larger than SQS's {MAX_MESSAGE_BYTES} bytes")
    try:
        body: Any = load_json(text, PipeRejected, what="the message body")
    except PipeRejected:
        body = text  # Pipes passes a body that is not JSON as its text
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": body,
        "attributes": message.get("Attributes", {}),
        "messageAttributes": {
            name: {
                "stringValue": value.get("StringValue"),
                "dataType": value.get("DataType"),
                "stringListValues": [],
                "binaryListValues": [],
            }
            for name, value in message.get("MessageAttributes", {}).items()
        },
        "md5OfBody": message.get("MD5OfBody"),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }


def render(template: str, record: Any, reserved: dict[str, str]) -> str:
    """``template`` with each ``<$.path>`` and ``<aws.pipes.*>`` replaced as Pipes does: inside a
    JSON string the value's text, JSON-escaped; elsewhere the value as JSON."""
    out: list[str] = []
    in_string = escaped = False
    position = 0
    while position < len(template):
        char = template[position]
        match = _PLACEHOLDER.match(template, position) if char == "<" else None
        if match:
            value = _value(match.group(1), record, reserved)
            if in_string:
                text = value if isinstance(value, str) else json.dumps(value)
                out.append(json.dumps(text)[1:-1])
            else:
                out.append(json.dumps(value))
            position = match.end()
            continue
        if in_string and escaped:
            escaped = False
        elif in_string and char == "\\":
            escaped = True
        elif char == '"':
            in_string = not in_string
        out.append(char)
        position += 1
    return "".join(out)


def _value(path: str, record: Any, reserved: dict[str, str]) -> Any:
    if not path.startswith("$"):
        if path not in reserved:
            raise PipeRejected(f"<{path}> is not a variable the embedded pipes know")
        return reserved[path]
    value = record
    for step in _STEP.finditer(path):
        key, index = step.group(1), step.group(2)
        if key is not None and isinstance(value, dict) and key in value:
            value = value[key]
        elif index is not None and isinstance(value, list) and int(index) < len(value):
            value = value[int(index)]
        else:
            raise PipeRejected(f"the input template's <{path}> is not in the message")
    return value


def _post(destination: _Destination, body: bytes) -> tuple[int, str]:
    request = urllib.request.Request(  # noqa: S310 - the destination's endpoint, https or a test's loopback
        destination.endpoint,
        data=body,
        method=destination.method,
        headers={"Content-Type": "application/json; charset=utf-8", **destination.headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310
            return int(response.status), response.read(MAX_ANSWER_BYTES).decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return int(error.code), error.read(MAX_ANSWER_BYTES).decode("utf-8", "replace")
    except OSError as error:  # URLError, a refused connection, a timeout
        raise PipeRejected(f"{destination.endpoint} did not answer: {error}") from None
