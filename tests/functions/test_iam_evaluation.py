"""IAM's evaluation of the functions' calls (tests/iam) refuses what the roles do not grant: every
embedded stack's calls go through it (tests/conftest.py), so it must be able to say no."""

from __future__ import annotations

from typing import Any

from tests.conftest import Embedded
from tests.iam.evaluation import ABSENT_KEY_ALLOWS, evaluate
from tests.iam.recording import Call
from tests.iam.requests import requests_for

REGION = "us-east-1"


def call(embedded: Embedded, function: str, prefix: str, operation: str, params: dict[str, Any]) -> Call:
    name = embedded.stack.functions[function].name
    try:
        requests: list[Any] | str = requests_for(prefix, operation, params, REGION)
    except KeyError as unmapped:
        requests = str(unmapped)
    return Call(function, name, prefix, operation, params, REGION, requests)


def test_a_grant_allows_and_a_missing_one_is_refused_naming_the_request(embedded: Embedded) -> None:
    table = embedded.stack.resources["StateTable"].ref
    cluster = embedded.site.stack_parameters()["ClusterName"]
    allowed = call(
        embedded,
        "ControllerStatusFunction",
        "dynamodb",
        "GetItem",
        {"TableName": table, "Key": {"pk": {"S": f"lease#{cluster}"}}},
    )
    # The lease's release is only for this cluster's key (DeleteOwnKeys: dynamodb:LeadingKeys).
    other_key = call(
        embedded,
        "ControllerStatusFunction",
        "dynamodb",
        "DeleteItem",
        {"TableName": table, "Key": {"pk": {"S": "lease#another-cluster"}}},
    )
    own_key = call(
        embedded,
        "ControllerStatusFunction",
        "dynamodb",
        "DeleteItem",
        {"TableName": table, "Key": {"pk": {"S": f"lease#{cluster}"}}},
    )
    never = call(
        embedded, "ControllerStatusFunction", "fsx", "DeleteBackup", {"BackupId": "backup-0123456789abcdef0"}
    )

    assert evaluate([allowed, own_key], embedded.stack) == []
    [refused_key, refused_action] = evaluate([other_key, never], embedded.stack)
    assert "dynamodb:DeleteItem" in refused_key
    assert "lease#another-cluster" in refused_key
    assert "ImplicitlyDenied" in refused_key
    assert "fsx:DeleteBackup" in refused_action


def test_an_operation_without_a_mapping_fails(embedded: Embedded) -> None:
    unknown = call(embedded, "ControllerStatusFunction", "dynamodb", "Scan", {"TableName": "t"})

    [problem] = evaluate([unknown], embedded.stack)
    assert "dynamodb:Scan has no IAM mapping" in problem


def test_an_allow_that_holds_because_a_key_was_absent_is_reported(embedded: Embedded) -> None:
    cluster_id = embedded.site.stack_parameters().get("ClusterId") or "abcd1234efgh"
    start = call(
        embedded,
        "HealthCheckFunction",
        "ssm",
        "StartSession",
        {
            "Target": f"sagemaker-cluster:{cluster_id}_controller-machine-i-0123456789abcdef0",
            "DocumentName": embedded.stack.resources["ControllerProbeDocument"].ref,
        },
    )

    assert evaluate([start], embedded.stack) == []
    # StartSessionsOnlyOurDocuments: BoolIfExists ssm:SessionDocumentAccessCheck, which no parameter sets.
    assert ("HealthCheckFunction", "ssm:StartSession", "ssm:SessionDocumentAccessCheck") in ABSENT_KEY_ALLOWS
