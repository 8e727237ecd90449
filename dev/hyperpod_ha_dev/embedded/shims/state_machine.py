"""AWS::StepFunctions::StateMachine. moto 5.2.5's model ignores ``DefinitionSubstitutions`` (both
definitions kept their ``${...}``), reads only ``DefinitionString``, and creates the state machine
in the backend that never runs an execution, even when moto is told to run them. Here each
``${Key}`` of the resolved definition is replaced by its resolved substitution as text, as
CloudFormation does, and CreateStateMachine puts it where moto runs executions."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from hyperpod_ha_dev.embedded.function_spec import parameter_text
from hyperpod_ha_dev.embedded.shims.model import Shim, client

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


def substituted(definition: str, substitutions: Mapping[str, Any]) -> str:
    """The definition with every ``${Key}`` replaced; a key without a substitution is an error
    (the state machine would fail on the text at run time)."""

    def value(match: re.Match[str]) -> str:
        if match.group(1) not in substitutions:
            raise ValueError(f"the definition uses {match.group(0)}, which has no substitution")
        return parameter_text(substitutions[match.group(1)])

    return _PLACEHOLDER.sub(value, definition)


class StateMachine(Shim):
    TYPE = "AWS::StepFunctions::StateMachine"
    NAME = "StateMachineName"

    @classmethod
    def create(cls, name: str, properties: dict[str, Any], account: str, region: str) -> Shim:
        definition = properties.get("DefinitionString") or json.dumps(properties["Definition"])
        arn = client("stepfunctions", region).create_state_machine(
            name=name,
            definition=substituted(definition, properties.get("DefinitionSubstitutions", {})),
            roleArn=properties["RoleArn"],
            type=properties.get("StateMachineType", "STANDARD"),
            tracingConfiguration={"enabled": bool(properties.get("TracingConfiguration", {}).get("Enabled"))},
        )["stateMachineArn"]
        return cls(arn, properties, Arn=arn, Name=name)
