"""docs/messages.md: a sample of every kind, made by the real builders, in the one form; a new
kind without a sample fails here."""

from __future__ import annotations

import json
import re

import pytest

from hyperpod_ha.topic_messages import check_form, kinds
from hyperpod_ha_stack import message_samples, messages_page
from hyperpod_ha_stack.generate import stale
from hyperpod_ha_stack.sample_inputs import REGION, STACK_NAME
from tests.conftest import ROOT


def test_every_kind_has_a_sample() -> None:
    assert message_samples.sampled_kinds() == set(kinds.KINDS)


@pytest.mark.parametrize("sample", message_samples.SAMPLES, ids=lambda sample: sample.title)
def test_every_sample_is_in_the_one_form(sample: message_samples.Sample) -> None:
    message = sample.make()
    check_form(message)
    assert sample.title.split(":")[0] in (message.attributes["kind"], message.attributes.get("verdict"))


def test_each_event_has_a_sample() -> None:
    events = {sample.make().attributes["event"] for sample in message_samples.SAMPLES}
    assert events == {"opened", "reminder", "resolved", "notice"}


def test_the_page_is_current_and_shows_every_sample() -> None:
    assert ROOT / "docs" / "messages.md" not in stale(ROOT), "run `make generate`"
    page = (ROOT / "docs" / "messages.md").read_text()
    assert page == messages_page.page()
    for policy in message_samples.FILTER_POLICIES.values():
        assert json.dumps(policy) in page
    for sample in message_samples.SAMPLES:
        assert f"Subject: `{sample.make().subject}`" in page


# A `hyperpod-ha` command a message prints: up to the end of its backquotes or its line.
_COMMAND = re.compile(r"hyperpod-ha (?:runbook|status|drill|restore|silence|doctor)\b[^`\n]*")


def test_every_command_a_message_prints_names_the_stack_and_region() -> None:
    # Issue 40: complete commands work as written from any directory, whatever the reader's
    # own configuration (which may name another stack, or none).
    commands = [
        command
        for sample in message_samples.SAMPLES
        for command in _COMMAND.findall(sample.make().body)
        if "--cluster" in command  # a mention ("`hyperpod-ha status` names it") is not a command
    ]
    assert any(command.startswith("hyperpod-ha runbook start") for command in commands)
    assert any(command.startswith("hyperpod-ha status") for command in commands)
    for command in commands:
        assert f"--stack-name {STACK_NAME} --region {REGION}" in command, command
