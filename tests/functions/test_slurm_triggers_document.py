"""The Slurm triggers' documents in the embedded stack: the stack's topic and no other, the two modes."""

from __future__ import annotations

import re
from collections.abc import Iterator

import boto3
import pytest

from hyperpod_ha.slurm_triggers.node import triggers_parameters
from tests.conftest import FAST_RUNS, Embedded, _embedded


@pytest.fixture
def run_command_stack() -> Iterator[Embedded]:
    yield from _embedded({**FAST_RUNS, "CommandTransport": "run-command"})


def _parameters(name: str) -> set[str]:
    document = boto3.client("ssm").describe_document(Name=name)["Document"]
    return {p["Name"] for p in document["Parameters"]}


def _patterns(name: str) -> dict[str, str]:
    import json

    content = json.loads(boto3.client("ssm").get_document(Name=name)["Content"])
    return {key: spec["allowedPattern"] for key, spec in content["parameters"].items()}


def _check(name: str, topic: str) -> None:
    patterns = _patterns(name)
    assert set(_parameters(name)) == set(patterns) == {"mode", "topicArn"}
    assert patterns["topicArn"] == f"^{topic}$"
    assert re.fullmatch(patterns["topicArn"], topic)
    assert not re.fullmatch(patterns["topicArn"], topic.replace("123456789012", "210987654321"))
    for mode in ("install", "list"):
        assert re.fullmatch(patterns["mode"], mode)
    assert not re.fullmatch(patterns["mode"], "clear")
    # What the watchdog sends is what the document declares.
    assert set(triggers_parameters("install", topic)) == set(patterns)


def test_the_session_document_admits_the_stacks_topic_only(embedded: Embedded) -> None:
    stack = embedded.stack
    name = stack.ref("SlurmTriggersDocument")
    assert boto3.client("ssm").describe_document(Name=name)["Document"]["DocumentType"] == "Session"
    _check(name, stack.parameters["SlurmFailoverTopicArn"])
    assert "SlurmTriggersCommandDocument" not in stack.resources


def test_with_run_command_the_command_document_holds_the_same(run_command_stack: Embedded) -> None:
    stack = run_command_stack.stack
    name = stack.ref("SlurmTriggersCommandDocument")
    assert boto3.client("ssm").describe_document(Name=name)["Document"]["DocumentType"] == "Command"
    _check(name, stack.parameters["SlurmFailoverTopicArn"])
