"""docs/deploying.md's policy for the deployer names every service the template creates resources
in (SAM's translation, as CloudFormation receives it), and is a valid IAM policy document."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import ROOT

# A resource type's service, as IAM's action prefix names it.
SERVICE_PREFIX = {
    "CloudWatch": "cloudwatch",
    "IAM": "iam",
    "Logs": "logs",
    "Lambda": "lambda",
    "SSM": "ssm",
    "SQS": "sqs",
    "Events": "events",
    "StepFunctions": "states",
    "DynamoDB": "dynamodb",
    "SNS": "sns",
    "KMS": "kms",
    "Scheduler": "scheduler",
    "SecretsManager": "secretsmanager",
    "Pipes": "pipes",
}


def deployer_policy() -> dict[str, Any]:
    text = (ROOT / "docs" / "deploying.md").read_text()
    start = text.index("```json\n", text.index("## The deployer's IAM")) + len("```json\n")
    policy: dict[str, Any] = json.loads(text[start : text.index("```", start)])
    return policy


def _actions(policy: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for statement in policy["Statement"]:
        actions = statement["Action"]
        found |= {actions} if isinstance(actions, str) else set(actions)
    return found


def test_the_policy_is_an_iam_policy_document() -> None:
    policy = deployer_policy()
    assert policy["Version"] == "2012-10-17"
    sids = [statement["Sid"] for statement in policy["Statement"]]
    assert len(sids) == len(set(sids))
    for statement in policy["Statement"]:
        assert statement["Effect"] == "Allow"
        assert statement["Resource"]
        assert all(":" in action for action in _actions({"Statement": [statement]}))


@pytest.mark.slow
def test_every_service_the_template_creates_resources_in_is_in_the_policy() -> None:
    from hyperpod_ha_dev.embedded.sam import translate

    resources = translate(ROOT / "template.yaml")["Resources"].values()
    services = {SERVICE_PREFIX[resource["Type"].split("::")[1]] for resource in resources}
    prefixes = {action.split(":")[0] for action in _actions(deployer_policy())}
    assert services - prefixes == set()
    assert "iam:PassRole" in _actions(deployer_policy())
