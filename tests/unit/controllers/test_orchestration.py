"""DescribeCluster's Orchestrator.Slurm read by the discovery: the config strategy and the
external accounting database, bounded and optional (sample answers validated by Stubber
against botocore's SageMaker model)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from hyperpod_ha.controllers.discovery import discover_controllers
from hyperpod_ha.controllers.orchestration import AccountingDatabase, SlurmOrchestration, orchestration_of
from tests.conftest import ROOT

SAMPLES = ROOT / "tests" / "fixtures" / "describe_cluster"


def sample(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SAMPLES / f"{name}.json").read_text())
    return loaded


def discovered(answer: dict[str, Any]) -> dict[str, Any]:
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    stub = Stubber(sagemaker)
    stub.add_response("describe_cluster", answer, {"ClusterName": "ml-cluster"})
    stub.add_response("list_cluster_nodes", {"ClusterNodeSummaries": []})
    with stub:
        found = discover_controllers(sagemaker, "ml-cluster", "controller-machine")
    stub.assert_no_pending_responses()
    return found.to_json()["accounting"]


def test_an_external_accounting_database_is_read_and_passed_on() -> None:
    assert discovered(sample("external_accounting")) == {
        "mode": "external",
        "config_strategy": "Managed",
        "database": {
            "endpoint": "slurm-accounting.cluster-c0ffee.us-east-1.rds.amazonaws.com",
            "port": 3306,
            "name": "slurm_acct_db",
            "secret_arn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:slurm-accounting-AbCdEf",
        },
    }


def test_the_internal_database_has_no_accounting_database() -> None:
    assert discovered(sample("internal_accounting")) == {
        "mode": "internal",
        "config_strategy": "Managed",
        "database": None,
    }


def test_no_orchestrator_at_all_is_internal() -> None:
    answer = sample("internal_accounting")
    del answer["Orchestrator"]
    assert discovered(answer) == {"mode": "internal", "config_strategy": None, "database": None}


@pytest.mark.parametrize(
    ("database", "expected"),
    [
        (
            {
                "Endpoint": "db.internal",
                "SecretArn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:x",
            },
            AccountingDatabase("db.internal", "arn:aws:secretsmanager:us-east-1:123456789012:secret:x"),
        ),
        # Out of bounds: dropped, and still external (an AccountingDatabase key was given).
        (
            {"Endpoint": "x" * 300, "Port": 70000, "Name": "bad name;", "SecretArn": "not-an-arn"},
            AccountingDatabase("(unreadable endpoint)", ""),
        ),
        ({"Endpoint": 5, "Port": True, "SecretArn": None}, AccountingDatabase("(unreadable endpoint)", "")),
    ],
)
def test_fields_are_bounded(database: dict[str, Any], expected: AccountingDatabase) -> None:
    found = orchestration_of({"Orchestrator": {"Slurm": {"AccountingDatabase": database}}})
    assert found.database == expected
    assert found.mode == "external"


@pytest.mark.parametrize("strategy", ["Overwrite", "Managed", "Merge", "SomethingNew"])
def test_config_strategies_are_kept(strategy: str) -> None:
    found = orchestration_of({"Orchestrator": {"Slurm": {"SlurmConfigStrategy": strategy}}})
    assert found == SlurmOrchestration(config_strategy=strategy)


@pytest.mark.parametrize(
    "answer", [{}, {"Orchestrator": None}, {"Orchestrator": {"Eks": {}}}, {"Orchestrator": {"Slurm": "x"}}]
)
def test_other_shapes_are_internal(answer: dict[str, Any]) -> None:
    assert orchestration_of(answer) == SlurmOrchestration()
    assert (
        orchestration_of({"Orchestrator": {"Slurm": {"SlurmConfigStrategy": "x" * 200}}}).config_strategy
        is None
    )


def test_the_rotation_refuses_only_an_external_database() -> None:
    from hyperpod_ha.errors import HyperpodHaError
    from hyperpod_ha.rotation.accounting_mode import refuse_external_database
    from hyperpod_ha.rotation.errors import ExternalAccountingDatabase

    refuse_external_database("ml-cluster", SlurmOrchestration)  # internal: no error
    external = orchestration_of(sample("external_accounting"))
    with pytest.raises(ExternalAccountingDatabase, match="uses an external accounting database") as raised:
        refuse_external_database("ml-cluster", lambda: external)
    assert raised.value.mode == "external"
    assert isinstance(raised.value, HyperpodHaError)
    assert "SlurmConfigStrategy Managed" in raised.value.reason
