"""The dead-letter message for a rejected input: always within SQS's limit, never an exception."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from hyperpod_ha.ingestion import dead_letter_body
from hyperpod_ha.ingestion.dead_letter_body import (
    EXCERPT_CHARS,
    MAX_KEPT_BYTES,
    MAX_REASON_CHARS,
    SQS_MAX_BODY_BYTES,
    rejected_body,
)
from hyperpod_ha.ingestion.rejected_inputs import RejectedInputs

MIB = 1024 * 1024


def deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


ADVERSARIAL = {
    # Each '"' and '\' doubles when the JSON prefix is encoded again.
    "quotes": {"Message": '"' * MIB},
    "backslashes": {"Message": "\\" * MIB},
    # A non-ASCII character is 3 UTF-8 bytes, 6 once escaped: counting characters undercounts.
    "non-ascii": {"Message": "é€" * (MIB // 2)},
    "emoji": {"Message": "\U0001f525" * (MIB // 4)},
    "lone-surrogates": {"Message": "\ud800" * 1000},
    "control-characters": {"Message": "\x00\x01\x1f" * (MIB // 3)},
    "many-keys": {f"k{i}": i for i in range(100_000)},
    "deep-nesting": deep(100_000),
    "huge-id": {"id": "i" * MIB},
}


def fits(body: str) -> dict[str, Any]:
    assert len(body.encode("utf-8")) <= MAX_KEPT_BYTES < SQS_MAX_BODY_BYTES
    loaded: dict[str, Any] = json.loads(body)
    return loaded


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_every_rejected_input_fits_an_sqs_message(name: str) -> None:
    raw = ADVERSARIAL[name]
    kept = fits(rejected_body("sns", "x" * MIB if name == "huge-id" else "id-1", "a reason", raw))
    assert kept["source"] == "sns"
    assert kept["reason"] == "a reason"
    assert len(kept["id"]) <= 256
    assert kept["input_truncated"] is (name not in ("lone-surrogates",))


def test_a_small_input_is_kept_whole_and_a_big_one_as_a_prefix_with_its_size() -> None:
    small = {"a": 1, "b": [None, True, 2.5, 'é\ud800"', {"c": []}]}
    assert fits(rejected_body("eventbridge", "e-1", "r", small)) == {
        "source": "eventbridge",
        "id": "e-1",
        "reason": "r",
        "input": small,
        "input_truncated": False,
    }
    kept = fits(rejected_body("sns", "m-1", "r", {"Message": '"' * MIB, "Subject": "s"}))
    assert kept["input_truncated"] is True
    assert set(kept["input"]["Message"]) == {'"'}
    assert EXCERPT_CHARS // 3 < len(kept["input"]["Message"]) <= EXCERPT_CHARS // 2  # '"' is 2 in JSON


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    raw=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
        lambda children: st.lists(children) | st.dictionaries(st.text(), children),
        max_leaves=30,
    ),
    input_id=st.text(),
    reason=st.text(),
)
def test_arbitrary_json_and_ids_give_a_body_that_fits(raw: Any, input_id: str, reason: str) -> None:
    fits(rejected_body("sns", input_id, reason, raw))


@pytest.mark.parametrize("name", ["quotes", "non-ascii", "deep-nesting", "huge-id"])
def test_keeping_an_adversarial_input_sends_one_message_and_does_not_raise(name: str) -> None:
    with mock_aws():
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="rejected")["QueueUrl"]
        reason = "message is longer than 512 characters \ud800 \x00"
        RejectedInputs(sqs, url).keep("sns", "i" * MIB, reason, ADVERSARIAL[name])
        (message,) = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"])["Messages"]
        fits(message["Body"])
        assert message["MessageAttributes"]["source"]["StringValue"] == "sns"


# --- cut before redacted (issue 35, finding 8) ------------------------------------------------


def _texts(value: Any) -> Iterator[str]:
    """Every text of a JSON-like value: its strings and its keys."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, str):
        yield value


# Each as big as a source could send and more (SNS and EventBridge allow 256 KiB), each full of
# what the redaction works hardest on: short "key=" pairs took 117 ms when redacted whole.
HARD_TO_REDACT = {
    **ADVERSARIAL,
    "key-pairs": {"Message": "k=v " * (MIB // 4)},
    "secret-pairs": {"Message": "password=x " * (MIB // 11)},
    "flags": {"Message": " -px" * (MIB // 4)},
    "many-secret-keys": {f"password{i}": "x" for i in range(100_000)},
    "many-texts": ["a=b " * 8] * 50_000,
}


@pytest.mark.parametrize("name", list(HARD_TO_REDACT))
def test_the_input_is_cut_before_the_redaction_sees_it(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def measured(value: Any) -> Any:
        seen.append(sum(len(text) for text in _texts(value)))
        return redact(value)

    redact = dead_letter_body.redact
    monkeypatch.setattr(dead_letter_body, "redact", measured)
    huge_reason = "reason " * MIB
    fits(rejected_body("sns", "i" * MIB, huge_reason, HARD_TO_REDACT[name]))

    head, excerpt = seen
    assert head <= 64 + 256 + MAX_REASON_CHARS
    # 8 KiB of the worst text redacts in about 15 ms here (`make bench`'s hostile input: every
    # reject under 50 ms); the whole 190 KB excerpt of before took 117 ms and more.
    assert excerpt <= EXCERPT_CHARS <= 8 * 1024


def test_the_reason_is_cut_before_it_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    from hyperpod_ha.ingestion import rejected_inputs

    seen: list[int] = []

    def measured(text: str) -> str:
        seen.append(len(text))
        return scrub_text(text)

    scrub_text = rejected_inputs.scrub_text
    monkeypatch.setattr(rejected_inputs, "scrub_text", measured)

    class Sqs:
        def send_message(self, **_: Any) -> dict[str, Any]:
            return {}

    RejectedInputs(Sqs(), "q").keep("sns", "m-1", "k=v " * MIB, {"Message": "x"})  # type: ignore[arg-type]
    assert seen == [MAX_REASON_CHARS]
