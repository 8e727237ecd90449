"""What the embedded stack holds after a lab run, counted as the chaos report (and ``lab verify``)
needs it: the OpsItems by problem, the verification runs' verdicts, the executions that failed from
an error no Fail state names, the lease, the restores' actions. Read through the AWS APIs (on moto)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import boto3

from hyperpod_ha.incidents.keys import KIND_KEY, SOURCE
from hyperpod_ha.state_table import read_lease
from hyperpod_ha_dev.embedded.created_stack import EmbeddedStack
from hyperpod_ha_dev.simulation.lab.chaos_report import IncidentRecord, Observation

VERIFICATION = "FailoverVerificationStateMachineArn"
RESTORE = "RedundancyRestoreStateMachineArn"
VERDICT_STATE = "Decide the verdict"


def incidents() -> list[IncidentRecord]:
    """Every OpsItem the stack opened, with its problem (the incident kind)."""
    ssm = boto3.client("ssm")
    found = ssm.describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": [SOURCE], "Operator": "Equal"}]
    )["OpsItemSummaries"]
    records = []
    for summary in found:
        item = ssm.get_ops_item(OpsItemId=summary["OpsItemId"])["OpsItem"]
        kind = (item.get("OperationalData") or {}).get(KIND_KEY, {}).get("Value", "?")
        records.append(
            IncidentRecord(
                item["OpsItemId"],
                kind,
                str(item.get("Status")),
                _epoch(item.get("CreatedTime")),
                _epoch(item.get("LastModifiedTime")),
            )
        )
    return sorted(records, key=lambda r: r.opened)


def _epoch(value: Any) -> float:
    return float(value.timestamp()) if hasattr(value, "timestamp") else float(value or 0)


def verdict_outputs(execution_arn: str) -> Iterator[tuple[float, Mapping[str, Any]]]:
    """Each verdict a verification run decided ("Decide the verdict"'s output), with when."""
    sfn = boto3.client("stepfunctions")
    history = sfn.get_execution_history(executionArn=execution_arn, maxResults=1000)
    for event in history["events"]:
        exited = event.get("stateExitedEventDetails")
        if exited and exited["name"] == VERDICT_STATE:
            output = json.loads(exited.get("output") or "null")
            value = (output or {}).get("verdict", {}).get("value")
            if isinstance(value, dict):
                yield event["timestamp"].timestamp(), value


def run_observations(stack: EmbeddedStack) -> list[Observation]:
    """Every verdict the verification runs decided."""
    found = []
    for execution in stack.executions(VERIFICATION):
        for at, value in verdict_outputs(execution["executionArn"]):
            reasons = tuple(str(reason) for reason in value.get("reasons") or ())
            found.append(Observation(at, "run", value.get("verdict"), value.get("redundancy"), reasons))
    return sorted(found, key=lambda o: o.at)


def declared_failures(definition: Mapping[str, Any]) -> frozenset[str]:
    """The errors the definition's Fail states end an execution with (nested states included)."""
    found: set[str] = set()
    for state in (definition.get("States") or {}).values():
        if state.get("Type") == "Fail" and isinstance(state.get("Error"), str):
            found.add(state["Error"])
        for branch in state.get("Branches") or []:
            found |= declared_failures(branch)
        for nested in (state.get("ItemProcessor"), state.get("Iterator")):
            if isinstance(nested, Mapping):
                found |= declared_failures(nested)
    return frozenset(found)


def uncaught_failures(stack: EmbeddedStack) -> list[str]:
    """The executions of the verification and restore state machines that FAILED with an error
    none of their Fail states names: an error nothing caught."""
    sfn = boto3.client("stepfunctions")
    found = []
    for output in (VERIFICATION, RESTORE):
        arn = str(stack.outputs[output])
        definition = sfn.describe_state_machine(stateMachineArn=arn)["definition"]
        declared = declared_failures(json.loads(definition))
        for execution in stack.executions(output):
            if execution["status"] != "FAILED":
                continue
            described = sfn.describe_execution(executionArn=execution["executionArn"])
            error = described.get("error") or "no error"
            if error not in declared:
                found.append(f"{execution['name']}: {error}: {str(described.get('cause') or '')[:200]}")
    return found


def restore_actions(stack: EmbeddedStack) -> list[dict[str, Any]]:
    """What every restore did (each action: controller, kind, restored, what), in order."""
    sfn = boto3.client("stepfunctions")
    actions: list[dict[str, Any]] = []
    for execution in sorted(stack.executions(RESTORE), key=lambda e: e["startDate"]):
        described = sfn.describe_execution(executionArn=execution["executionArn"])
        output = json.loads(described.get("output") or "{}")
        actions += [dict(action) for action in output.get("results") or []]
    return actions


def leases_held(stack: EmbeddedStack) -> int:
    """1 when the cluster's lease is still in the state table (expired or not), else 0."""
    cluster = str(stack.parameters["ClusterName"])
    return int(read_lease(boto3.client("dynamodb"), stack.ref("StateTable"), cluster) is not None)
