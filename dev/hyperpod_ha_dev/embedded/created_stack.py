"""The stack as created on moto: its resources, functions and outputs, and what it can do."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

from hyperpod_ha_dev.embedded import delivery
from hyperpod_ha_dev.embedded.cfn import (
    TemplateError,
)
from hyperpod_ha_dev.embedded.function_spec import parameter_text
from hyperpod_ha_dev.embedded.functions import FunctionSpec, invoke

ACCOUNT = "123456789012"
REGION = "us-east-1"


@dataclass
class Physical:
    ref: str
    attributes: dict[str, str] = field(default_factory=dict)


@dataclass
class EmbeddedStack:
    name: str
    root: Path
    parameters: dict[str, Any]
    resources: dict[str, Physical]
    functions: dict[str, FunctionSpec]
    outputs: dict[str, Any]

    def function(self, logical_id: str) -> FunctionSpec:
        try:
            return self.functions[logical_id]
        except KeyError:
            raise KeyError(
                f"{logical_id} is not a function of the template; known: {sorted(self.functions)}"
            ) from None

    def override_environment(self, logical_id: str, **variables: str) -> None:
        """Change a function's environment after creation (the simulation swaps transports)."""
        spec = dataclasses.replace(
            self.function(logical_id), environment={**self.function(logical_id).environment, **variables}
        )
        self.functions[logical_id] = spec
        delivery.register(spec)

    def invoke(self, logical_id: str, event: Any) -> Any:
        return invoke(self.function(logical_id), event)

    def ref(self, logical_id: str) -> str:
        return self.resources[logical_id].ref

    def tick(self, schedule_logical_id: str = "WatchdogSchedule") -> Any:
        """Deliver one tick of a schedule as EventBridge Scheduler would: its target's Input with
        the context attributes filled in, invoked asynchronously (retries, then the DLQ)."""
        schedule = boto3.client("scheduler").get_schedule(Name=self.ref(schedule_logical_id))
        target = schedule["Target"]
        spec = delivery.function_for(target["Arn"])
        if spec is None:
            raise TemplateError(f"{schedule_logical_id} targets {target['Arn']}, not a function of the stack")
        now = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        attributes = {
            "<aws.scheduler.execution-id>": uuid.uuid4().hex,
            "<aws.scheduler.scheduled-time>": now,
            "<aws.scheduler.schedule-arn>": schedule["Arn"],
            "<aws.scheduler.attempt-number>": "1",
        }
        text = str(target.get("Input", "{}"))
        for attribute, value in attributes.items():
            text = text.replace(attribute, value)
        return delivery.invoke_async(spec, json.loads(text))

    def executions(self, output: str = "FailoverVerificationStateMachineArn") -> list[dict[str, Any]]:
        sfn = boto3.client("stepfunctions")
        arn = str(self.outputs[output])
        return [dict(execution) for execution in sfn.list_executions(stateMachineArn=arn)["executions"]]

    def stop_running_executions(self) -> None:
        """moto runs executions in threads: stop them before the mock goes away."""
        sfn = boto3.client("stepfunctions")
        drills = (
            self.executions("FailoverDrillStateMachineArn")
            if "FailoverDrillStateMachineArn" in self.outputs
            else []
        )
        for execution in self.executions() + drills:
            if execution["status"] != "RUNNING":
                continue
            # moto's worker has no environment until its thread has begun; it cannot be stopped before.
            for _ in range(50):
                try:
                    sfn.stop_execution(executionArn=execution["executionArn"], error="Stopped")
                    break
                except AttributeError:
                    time.sleep(0.05)

    def record_in_cloudformation(self) -> None:
        """A CloudFormation stack of this name with the same parameters and outputs, for the
        tools that find a deployed stack that way (``runbook``, ``invoke --stack-name``)."""
        parameters = {key: parameter_text(value) for key, value in self.parameters.items()}
        body = {
            "Parameters": {key: {"Type": "String"} for key in parameters},
            # CloudFormation wants one resource; moto creates nothing for this one.
            "Resources": {"Marker": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
            "Outputs": {key: {"Value": parameter_text(value)} for key, value in self.outputs.items()},
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            boto3.client("cloudformation").create_stack(
                StackName=self.name,
                TemplateBody=json.dumps(body),
                Parameters=[
                    {"ParameterKey": key, "ParameterValue": value} for key, value in parameters.items()
                ],
            )
