"""The embedded stack honours the template's RotationScheduled condition: no rotation schedule
(and no rotation) unless the operator sets RotationDays."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from hyperpod_ha_dev.embedded.site import create_site, embedded_aws
from hyperpod_ha_dev.embedded.stack import create_stack
from tests.conftest import ROOT


def deployed(**parameters: Any) -> Iterator[dict[str, Any]]:
    with embedded_aws():
        site = create_site()
        site.extra_parameters.update(parameters)
        stack = create_stack(ROOT, site.stack_parameters())
        yield {
            "secret": boto3.client("secretsmanager").describe_secret(SecretId=site.secret_arn),
            "function_arn": stack.function("RotateDbSecretFunction").arn,
            "strategy": stack.function("RotateDbSecretFunction").environment["ROTATION_STRATEGY"],
        }


@pytest.fixture
def by_default() -> Iterator[dict[str, Any]]:
    yield from deployed()


@pytest.fixture
def every_30_days() -> Iterator[dict[str, Any]]:
    yield from deployed(RotationDays=30, RotationStrategy="alternating")


def test_the_default_stack_creates_no_rotation_schedule(by_default: dict[str, Any]) -> None:
    secret = by_default["secret"]
    assert not secret.get("RotationEnabled")
    assert "RotationLambdaARN" not in secret
    assert "RotationRules" not in secret
    assert by_default["strategy"] == "single"


def test_rotation_days_create_the_schedule(every_30_days: dict[str, Any]) -> None:
    secret = every_30_days["secret"]
    assert secret["RotationEnabled"] is True
    assert secret["RotationLambdaARN"] == every_30_days["function_arn"]
    assert secret["RotationRules"]["AutomaticallyAfterDays"] == 30  # moto's form of rate(30 days)
    assert every_30_days["strategy"] == "alternating"
