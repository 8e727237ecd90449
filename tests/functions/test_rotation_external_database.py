"""With an external accounting database (DescribeCluster's Orchestrator.Slurm.AccountingDatabase)
the rotation refuses before setSecret: a typed error naming the mode, nothing changed, the
secret's AWSCURRENT untouched (moto's Secrets Manager)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from hyperpod_ha.rotation.errors import ExternalAccountingDatabase, RotationRequestInvalid
from hyperpod_ha_dev.embedded.functions import FunctionError
from hyperpod_ha_dev.embedded.site import create_site, embedded_aws
from hyperpod_ha_dev.embedded.stack import create_stack
from tests.conftest import ROOT

SAMPLES = ROOT / "tests" / "fixtures" / "describe_cluster"


@pytest.fixture
def external() -> Iterator[tuple[Any, Any]]:
    with embedded_aws():
        site = create_site()
        site.extra_parameters.update(RotationDays=30)
        stack = create_stack(ROOT, site.stack_parameters())
        site.set_orchestrator(json.loads((SAMPLES / "external_accounting.json").read_text())["Orchestrator"])
        yield site, stack


def versions(secret_arn: str) -> dict[str, list[str]]:
    stages: dict[str, list[str]] = boto3.client("secretsmanager").describe_secret(SecretId=secret_arn)[
        "VersionIdsToStages"
    ]
    return stages


def test_the_rotation_refuses_and_awscurrent_is_untouched(
    external: tuple[Any, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Secrets Manager's first step, as it sends it (moto's RotateSecret would move AWSCURRENT
    to the new version after a failed step, which Secrets Manager never does)."""
    site, stack = external
    secrets = boto3.client("secretsmanager")
    before = secrets.get_secret_value(SecretId=site.secret_arn, VersionStage="AWSCURRENT")
    stages_before = versions(site.secret_arn)
    token = "0b6c3f9e-2d4a-4e8b-9c1d-7a5e3f2b1c0d"

    with pytest.raises(FunctionError) as raised:
        stack.invoke(
            "RotateDbSecretFunction",
            {"Step": "createSecret", "SecretId": site.secret_arn, "ClientRequestToken": token},
        )

    # Lambda's report: the typed error's name, and a message naming the mode.
    assert raised.value.error_type == ExternalAccountingDatabase.__name__
    assert "uses an external accounting database" in raised.value.error_message
    after = secrets.get_secret_value(SecretId=site.secret_arn, VersionStage="AWSCURRENT")
    assert (after["VersionId"], after["SecretString"]) == (before["VersionId"], before["SecretString"])
    assert versions(site.secret_arn) == stages_before  # no AWSPENDING, no new version
    refused = [r for r in caplog.records if r.getMessage() == "rotation refused"]
    assert [r.accounting_mode for r in refused] == ["external"]  # type: ignore[attr-defined]


def test_the_internal_database_passes_the_check(external: tuple[Any, Any]) -> None:
    site, stack = external
    site.set_orchestrator(json.loads((SAMPLES / "internal_accounting.json").read_text())["Orchestrator"])
    # Past the check, the step's own rule answers: this token is not a rotation's.
    with pytest.raises(
        FunctionError, match=f"{RotationRequestInvalid.__name__}: .* has no stage for rotation"
    ):
        stack.invoke(
            "RotateDbSecretFunction",
            {"Step": "createSecret", "SecretId": site.secret_arn, "ClientRequestToken": "b" * 32},
        )


def test_each_step_before_set_names_the_mode(external: tuple[Any, Any]) -> None:
    site, stack = external
    for step in ("createSecret", "setSecret"):
        with pytest.raises(FunctionError, match="external accounting database") as raised:
            stack.invoke(
                "RotateDbSecretFunction",
                {"Step": step, "SecretId": site.secret_arn, "ClientRequestToken": "a" * 32},
            )
        assert "slurm-accounting.cluster-c0ffee" in str(raised.value)
