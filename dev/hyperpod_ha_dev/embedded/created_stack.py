"""The stack as created on moto: its resources, functions and outputs, and what it can do."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3

from hyperpod_ha_dev.embedded import delivery
from hyperpod_ha_dev.embedded.functions import FunctionSpec, invoke
from hyperpod_ha_stack.template import TemplateError


@dataclass(frozen=True)
class Physical:
    """A created resource: what Ref answers (its physical id), and its type."""

    ref: str
    type: str


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

    def deliver_pipe(self, logical_id: str) -> list[Any]:
        """Drain a pipe's queue once as EventBridge Pipes would (:mod:`.pipes`): moto runs none."""
        from hyperpod_ha_dev.embedded import pipes

        return list(pipes.deliver(self.ref(logical_id)))

    def executions(self, output: str = "FailoverVerificationStateMachineArn") -> list[dict[str, Any]]:
        sfn = boto3.client("stepfunctions")
        arn = str(self.outputs[output])
        return [dict(execution) for execution in sfn.list_executions(stateMachineArn=arn)["executions"]]

    def stop_running_executions(self) -> None:
        """moto runs executions in threads: stop them before the mock goes away."""
        sfn = boto3.client("stepfunctions")
        machines = [p.ref for p in self.resources.values() if p.type == "AWS::StepFunctions::StateMachine"]
        for machine in machines:
            for execution in sfn.list_executions(stateMachineArn=machine, statusFilter="RUNNING")[
                "executions"
            ]:
                # moto's worker has no environment until its thread has begun; it cannot be stopped before.
                for _ in range(50):
                    try:
                        sfn.stop_execution(executionArn=execution["executionArn"], error="Stopped")
                        break
                    except AttributeError:
                        time.sleep(0.05)
