"""Secrets Manager's part of a rotation, for tests: moto's ``RotateSecret`` with its Lambda
invocations routed to a handler in this process.

moto's ``rotate_secret`` creates the token's empty AWSPENDING version, enables rotation
(with ``AutomaticallyAfterDays``) and invokes the rotation function once per step. Routing
those invocations lets a test run the real handler, stop after a given step (a crash: the
remaining steps never run, as when the function times out) or only start a rotation and
drive the steps itself. A rerun is what Secrets Manager does after a failure: the four
steps again with the same token (moto's ``rotate_secret`` would wipe the pending value, so
:meth:`RotationService.rerun` calls the handler directly).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from typing import Any

import boto3
import pytest
from moto.awslambda.models import LambdaBackend

STEPS = ("createSecret", "setSecret", "testSecret", "finishSecret")


class RotationService:
    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, handler: Callable[[dict[str, Any]], Any] | None
    ) -> None:
        self.handler = handler
        self.events: list[dict[str, Any]] = []
        self.crash_after: str | None = None
        self._crashed = False
        self._function_arn: str | None = None
        service = self

        # moto calls invoke(function_name, qualifier=, body=, headers=, response_headers=).
        def invoke(backend: LambdaBackend, function_name: str, **call: Any) -> bytes:
            event = json.loads(call["body"])
            service.events.append(event)
            if service.handler is None or service._crashed:
                return b"null"
            service.handler(event)
            if event["Step"] == service.crash_after:
                service._crashed = True
            return b"null"

        monkeypatch.setattr(LambdaBackend, "invoke", invoke)

    @property
    def function_arn(self) -> str:
        if self._function_arn is None:
            iam = boto3.client("iam")
            role = iam.create_role(
                RoleName="rotation-test-role",
                AssumeRolePolicyDocument=json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Principal": {"Service": "lambda.amazonaws.com"},
                                "Action": "sts:AssumeRole",
                            }
                        ],
                    }
                ),
            )["Role"]["Arn"]
            code = io.BytesIO()
            with zipfile.ZipFile(code, "w") as archive:
                archive.writestr("app.py", "def lambda_handler(event, context):\n    return None\n")
            self._function_arn = boto3.client("lambda").create_function(
                FunctionName="RotateDbSecretFunction",
                Runtime="python3.13",
                Role=role,
                Handler="app.lambda_handler",
                Code={"ZipFile": code.getvalue()},
            )["FunctionArn"]
        return self._function_arn

    def rotate(self, secret_id: str, *, crash_after: str | None = None) -> str:
        """One rotation through moto; returns its token."""
        self.crash_after = crash_after
        self._crashed = False
        response = boto3.client("secretsmanager").rotate_secret(
            SecretId=secret_id,
            RotationLambdaARN=self.function_arn,
            RotationRules={"AutomaticallyAfterDays": 30},
        )
        return str(response["VersionId"])

    def start(self, secret_id: str) -> str:
        """Only what Secrets Manager does before the first step: the token's empty AWSPENDING."""
        handler, self.handler = self.handler, None
        try:
            return self.rotate(secret_id)
        finally:
            self.handler = handler

    def rerun(self, secret_id: str, token: str, steps: tuple[str, ...] = STEPS) -> list[Any]:
        assert self.handler is not None
        return [
            self.handler({"Step": step, "SecretId": secret_id, "ClientRequestToken": token}) for step in steps
        ]


def stages(secret_id: str) -> dict[str, list[str]]:
    described = boto3.client("secretsmanager").describe_secret(SecretId=secret_id)
    return {version: sorted(labels) for version, labels in described["VersionIdsToStages"].items()}


def value(secret_id: str, stage: str = "AWSCURRENT") -> dict[str, Any]:
    text = boto3.client("secretsmanager").get_secret_value(SecretId=secret_id, VersionStage=stage)[
        "SecretString"
    ]
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def raw_value(secret_id: str, stage: str = "AWSCURRENT") -> str:
    return str(
        boto3.client("secretsmanager").get_secret_value(SecretId=secret_id, VersionStage=stage)[
            "SecretString"
        ]
    )
