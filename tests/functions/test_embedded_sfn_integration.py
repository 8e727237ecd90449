"""Step Functions' ``startExecution`` integration on the embedded AWS, as AWS runs it: a call
without ``Name`` gets a name of its own each time (moto named them all ``None``, so the second
failed with ExecutionAlreadyExists), and the answer names ``ExecutionArn`` (what the
verification's "Start the restore" selects)."""

from __future__ import annotations

import json
import time

import boto3

from hyperpod_ha_dev.embedded.site import embedded_aws

ROLE = "arn:aws:iam::123456789012:role/states"


def _machine(sfn: object, name: str, definition: dict[str, object]) -> str:
    return str(
        sfn.create_state_machine(name=name, definition=json.dumps(definition), roleArn=ROLE)[  # type: ignore[attr-defined]
            "stateMachineArn"
        ]
    )


def test_each_start_without_a_name_is_its_own_execution_and_answers_as_aws_does() -> None:
    with embedded_aws():
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        target = _machine(sfn, "target", {"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}})
        caller = _machine(
            sfn,
            "caller",
            {
                "StartAt": "Start it",
                "States": {
                    "Start it": {
                        "Type": "Task",
                        "Resource": "arn:aws:states:::states:startExecution",
                        "Parameters": {"StateMachineArn": target, "Input": {"from": "caller"}},
                        "ResultSelector": {"execution_arn.$": "$.ExecutionArn"},
                        "End": True,
                    }
                },
            },
        )
        runs = [sfn.start_execution(stateMachineArn=caller, name=f"call-{n}")["executionArn"] for n in (1, 2)]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(
            sfn.describe_execution(executionArn=arn)["status"] == "RUNNING" for arn in runs
        ):
            time.sleep(0.2)
        outputs = [sfn.describe_execution(executionArn=arn) for arn in runs]
        started = sfn.list_executions(stateMachineArn=target)["executions"]

    assert [o["status"] for o in outputs] == ["SUCCEEDED", "SUCCEEDED"], outputs
    arns = [json.loads(o["output"])["execution_arn"] for o in outputs]
    assert sorted(arns) == sorted(e["executionArn"] for e in started)
    assert len({e["name"] for e in started}) == 2
    assert "None" not in {e["name"] for e in started}
