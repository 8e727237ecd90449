"""The template's functions as Lambda would start them: handler, memory, timeout, environment.

Read from ``template.yaml`` each run, so a function added later is measured with no edit.
Parameters without a default get placeholder values: the environment only has to look like a
deployed one for an import, nothing calls AWS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bench import REGION
from hyperpod_ha_dev.cfn import Context, Resolver, evaluate_conditions
from hyperpod_ha_dev.embedded.function_spec import function_spec, run_properties
from hyperpod_ha_dev.embedded.sam import translate
from hyperpod_ha_stack.template import load_template

ACCOUNT: Final = "123456789012"
STACK: Final = "hyperpod-ha-bench"

# Values shaped like real ones, for the parameters the template leaves without a default.
PLACEHOLDERS: Final[Mapping[str, Any]] = {
    "ClusterName": "ml-cluster",
    "SlurmFailoverTopicArn": f"arn:aws:sns:{REGION}:{ACCOUNT}:ml-cluster-slurm-failover",
    "DbSecretArn": f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:ml-cluster-slurmdbd-AbCdEf",
    "DbHost": "slurmdb.cluster-abcdefghijkl.us-east-1.rds.amazonaws.com",
    "FileSystemId": "fs-0123456789abcdef0",
    "SubnetIds": ["subnet-0123456789abcdef0"],
    "SecurityGroupIds": ["sg-0123456789abcdef0"],
}

_ARN_SHAPES: Final[Mapping[str, str]] = {
    "AWS::Lambda::Function": "arn:aws:lambda:{region}:{account}:function:{name}",
    "AWS::StepFunctions::StateMachine": "arn:aws:states:{region}:{account}:stateMachine:{name}",
    "AWS::SNS::Topic": "arn:aws:sns:{region}:{account}:{name}",
    "AWS::SQS::Queue": "arn:aws:sqs:{region}:{account}:{name}",
    "AWS::DynamoDB::Table": "arn:aws:dynamodb:{region}:{account}:table/{name}",
    "AWS::Logs::LogGroup": "arn:aws:logs:{region}:{account}:log-group:{name}:*",
    "AWS::Lambda::LayerVersion": "arn:aws:lambda:{region}:{account}:layer:{name}:1",
}


@dataclass(frozen=True)
class LambdaFunction:
    """One ``AWS::Serverless::Function``, resolved with placeholder parameters."""

    logical_id: str
    handler: str  # "app.lambda_handler"
    source_dir: Path  # CodeUri in the checkout
    memory_mb: int
    timeout_seconds: int
    environment: Mapping[str, str]
    tracing_active: bool

    @property
    def module(self) -> str:
        return self.handler.rpartition(".")[0]

    @property
    def attribute(self) -> str:
        return self.handler.rpartition(".")[2]


def placeholder_parameters(template: Mapping[str, Any]) -> dict[str, Any]:
    """Defaults where the template has them, placeholders (by name, else by type) elsewhere."""
    values: dict[str, Any] = {}
    for name, spec in template.get("Parameters", {}).items():
        if "Default" in spec:
            values[name] = spec["Default"]
        elif name in PLACEHOLDERS:
            values[name] = PLACEHOLDERS[name]
        elif str(spec.get("Type", "")).startswith("List<"):
            values[name] = [f"placeholder-{name.lower()}"]
        elif spec.get("Type") == "Number":
            values[name] = 0
        else:
            values[name] = f"placeholder-{name.lower()}"
    return values


def _physical(logical_id: str) -> str:
    return f"{STACK}-{logical_id}"[:64]


def _resolver(template: Mapping[str, Any]) -> Resolver:
    values = placeholder_parameters(template)
    resources: Mapping[str, Any] = template["Resources"]

    def arn(logical_id: str) -> str:
        kind = resources.get(logical_id, {}).get("Type", "")
        shape = _ARN_SHAPES.get(kind, "arn:aws:placeholder:{region}:{account}:{name}")
        return shape.format(region=REGION, account=ACCOUNT, name=_physical(logical_id))

    def ref(logical_id: str) -> str:
        kind = resources.get(logical_id, {}).get("Type", "")
        if kind in ("AWS::StepFunctions::StateMachine", "AWS::SNS::Topic", "AWS::Lambda::LayerVersion"):
            return arn(logical_id)
        if kind == "AWS::SQS::Queue":
            return f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{_physical(logical_id)}"
        return _physical(logical_id)

    def get_att(logical_id: str, attribute: str) -> str:
        return arn(logical_id) if attribute == "Arn" else f"{_physical(logical_id)}-{attribute}"

    pseudo = {
        "AWS::AccountId": ACCOUNT,
        "AWS::Region": REGION,
        "AWS::Partition": "aws",
        "AWS::StackName": STACK,
        "AWS::URLSuffix": "amazonaws.com",
    }
    conditions = evaluate_conditions(template, values)
    return Resolver(template, Context(values, pseudo, ref, get_att, conditions))


def template_functions(root: Path) -> list[LambdaFunction]:
    """Every function of ``root/template.yaml`` (as SAM translates it), in template order."""
    template = translate(root / "template.yaml")
    resolver = _resolver(template)
    found = []
    for logical_id, resource in template["Resources"].items():
        if resource.get("Type") != "AWS::Lambda::Function":
            continue
        name = _physical(logical_id)
        arn = _ARN_SHAPES["AWS::Lambda::Function"].format(region=REGION, account=ACCOUNT, name=name)
        props = run_properties(template, resolver, logical_id)
        spec = function_spec(root, logical_id, name, arn, props)
        found.append(
            LambdaFunction(
                logical_id=logical_id,
                handler=spec.handler,
                source_dir=spec.code_dir,
                memory_mb=spec.memory,
                timeout_seconds=spec.timeout,
                environment=dict(spec.environment),
                tracing_active=props.get("TracingConfig", {}).get("Mode") == "Active",
            )
        )
    return found


def layer_ids(root: Path) -> list[str]:
    """The template's layers (``AWS::Serverless::LayerVersion``), built under their logical ids."""
    template = load_template(root / "template.yaml")
    return [
        logical_id
        for logical_id, resource in template["Resources"].items()
        if resource.get("Type") == "AWS::Serverless::LayerVersion"
    ]
