"""Creating the resources of ``template.yaml`` on moto, in process.

The template is the single description: every function, table, queue, topic, document,
rule and state machine it declares is created here with its resolved properties, and the
functions' real handlers answer moto's Lambda invocations (see ``delivery``).
Resource types the template may use without an effect here (layers, permissions, queue
policies) are listed in ``WITHOUT_EFFECT``; any other unknown type raises."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hyperpod_ha_dev.embedded.cfn import (
    Context,
    Resolver,
    TemplateError,
    evaluate_conditions,
    load_template,
    parameter_values,
)
from hyperpod_ha_dev.embedded.created_stack import ACCOUNT, REGION, EmbeddedStack, Physical
from hyperpod_ha_dev.embedded.functions import FunctionSpec, new_containers
from hyperpod_ha_dev.embedded.resource_creators import ResourceCreators

CREATION_ORDER = (
    "AWS::Logs::LogGroup",
    "AWS::KMS::Key",
    "AWS::DynamoDB::Table",
    "AWS::SQS::Queue",
    "AWS::SNS::Topic",
    "AWS::SNS::Subscription",
    "AWS::SSM::Document",
    "AWS::Serverless::Function",
    "AWS::Serverless::StateMachine",
    "AWS::Events::Rule",
    "AWS::CloudWatch::Alarm",
    "AWS::IAM::Role",
    "AWS::Scheduler::Schedule",
    "AWS::SecretsManager::RotationSchedule",
    "AWS::CloudWatch::Dashboard",
)
WITHOUT_EFFECT = {
    "AWS::Serverless::LayerVersion",  # the package is importable in process
    "AWS::Lambda::Permission",  # moto does not check resource policies
    "AWS::SQS::QueuePolicy",
    "AWS::SNS::TopicPolicy",  # same: who may publish is IAM's business, which moto does not evaluate
}


def create_stack(
    root: Path, parameters: Mapping[str, Any], name: str = "hyperpod-ha", region: str = REGION
) -> EmbeddedStack:
    """Create the stack of ``root/template.yaml``; call inside
    :func:`~hyperpod_ha_dev.embedded.site.embedded_aws`
    (or against a moto server)."""
    new_containers()
    template = load_template(root / "template.yaml")
    values = parameter_values(template, parameters)
    stack = StackBuilder(root, template, values, name, region).build()
    stack.record_in_cloudformation()
    return stack


class StackBuilder(ResourceCreators):
    def __init__(
        self, root: Path, template: dict[str, Any], values: dict[str, Any], name: str, region: str
    ) -> None:
        self.root = root
        self.template = template
        self.name = name
        self.region = region
        self.resources: dict[str, Physical] = {}
        self.functions: dict[str, FunctionSpec] = {}
        pseudo = {
            "AWS::AccountId": ACCOUNT,
            "AWS::Region": region,
            "AWS::Partition": "aws",
            "AWS::StackName": name,
            "AWS::URLSuffix": "amazonaws.com",
        }
        self.conditions = evaluate_conditions(template, values)
        self.values = values
        self.resolver = Resolver(template, Context(values, pseudo, self._ref, self._get_att, self.conditions))
        self._predict()

    # Functions and state machines refer to each other; their names and ARNs are known ahead.
    def _predict(self) -> None:
        for logical_id, resource in self._declared():
            physical = self._physical_name(logical_id)
            if resource["Type"] == "AWS::Serverless::Function":
                arn = f"arn:aws:lambda:{self.region}:{ACCOUNT}:function:{physical}"
                self.resources[logical_id] = Physical(physical, {"Arn": arn})
            elif resource["Type"] == "AWS::Serverless::StateMachine":
                arn = f"arn:aws:states:{self.region}:{ACCOUNT}:stateMachine:{physical}"
                self.resources[logical_id] = Physical(arn, {"Arn": arn, "Name": physical})
            elif resource["Type"] == "AWS::Serverless::LayerVersion":
                arn = f"arn:aws:lambda:{self.region}:{ACCOUNT}:layer:{physical}:1"
                self.resources[logical_id] = Physical(arn)

    def _declared(self) -> list[tuple[str, dict[str, Any]]]:
        declared = []
        for logical_id, resource in self.template["Resources"].items():
            condition = resource.get("Condition")
            if condition is None or self.conditions[condition]:
                declared.append((logical_id, resource))
        return declared

    def _ref(self, logical_id: str) -> str:
        if logical_id not in self.resources:
            raise TemplateError(f"Ref to {logical_id}, which is not created (yet)")
        return self.resources[logical_id].ref

    def _get_att(self, logical_id: str, attribute: str) -> str:
        try:
            return self.resources[logical_id].attributes[attribute]
        except KeyError:
            raise TemplateError(f"GetAtt {logical_id}.{attribute} is not known") from None

    def build(self) -> EmbeddedStack:
        declared = self._declared()
        for resource_type in CREATION_ORDER:
            for logical_id, resource in declared:
                if resource["Type"] == resource_type:
                    properties = resource.get("Properties", {})
                    getattr(self, "_create_" + resource_type.split("::")[-1].lower())(logical_id, properties)
        unknown = {r["Type"] for _, r in declared} - set(CREATION_ORDER) - WITHOUT_EFFECT
        if unknown:
            raise TemplateError(f"the embedded stack does not know these resource types: {sorted(unknown)}")
        outputs = {
            key: self.resolver.resolve(spec["Value"])
            for key, spec in self.template.get("Outputs", {}).items()
            if "Condition" not in spec or self.conditions[spec["Condition"]]
        }
        return EmbeddedStack(self.name, self.root, self.values, self.resources, self.functions, outputs)
