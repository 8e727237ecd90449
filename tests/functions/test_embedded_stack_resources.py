"""The embedded stack against the template SAM translates, resource by resource.

Every resource of the translation whose condition holds was created (moto's ListStackResources
names it) and keeps, in moto's backends, the properties the template gives it, resolved here
independently (``cfn.Resolver``): a function's handler, environment, layers, architecture and
dead-letter queue, both state machines fully substituted, the alarms, the schedule, the rotation
schedule, the wiring (subscriptions, rules and their targets, retries), and the outputs. What
moto keeps without effect is listed with the reason. Two parameter sets turn every condition.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from hyperpod_ha_dev.cfn import Context, Resolver, evaluate_conditions
from hyperpod_ha_dev.embedded import shims
from hyperpod_ha_dev.embedded.account import ACCOUNT, REGION
from hyperpod_ha_dev.embedded.function_spec import parameter_text
from hyperpod_ha_dev.embedded.sam import translate
from hyperpod_ha_dev.embedded.site import create_site, embedded_aws
from hyperpod_ha_dev.embedded.stack import EmbeddedStack, create_stack
from tests.conftest import ROOT

FLIPPED = {
    "RotationDays": 30,
    "RotationStrategy": "alternating",
    "CommandTransport": "run-command",
    "NotificationEmail": "ops@example.com",
    "WatchdogRateMinutes": 1,
    "IncidentResponsePlanArn": "arn:aws:ssm-incidents::123456789012:response-plan/on-call",
    "MasterSecretArn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:master-AbCdEf",
    "LocalEndpointUrl": "http://127.0.0.1:4566",
    "FunctionArchitecture": "x86_64",
    "PagingService": "pagerduty",  # PagingSecretArn: a secret the fixture creates first
}
# Properties moto keeps nowhere, or keeps without any effect in moto, and why.
WITHOUT_EFFECT = {
    ("AWS::DynamoDB::Table", "TimeToLiveSpecification"): "moto never expires an item",
    ("AWS::DynamoDB::Table", "SSESpecification"): "moto encrypts nothing",
    ("AWS::DynamoDB::Table", "PointInTimeRecoverySpecification"): "moto restores nothing",
    ("AWS::IAM::Role", "ManagedPolicyArns"): "moto knows no AWS managed policy unless told to load them all",
    ("AWS::Lambda::Permission", "*"): "a function's resource policy, which moto never evaluates",
}


@dataclass
class Created:
    stack: EmbeddedStack
    translated: dict[str, Any]
    conditions: dict[str, bool]
    resolve: Callable[[Any], Any]
    attribute: Callable[[str, str], Any]

    def active(self) -> dict[str, dict[str, Any]]:
        return {
            logical_id: resource
            for logical_id, resource in self.translated["Resources"].items()
            if self.conditions.get(resource.get("Condition", ""), True)
        }


@pytest.fixture(scope="module", params=["defaults", "every condition turned"])
def created(request: pytest.FixtureRequest) -> Iterator[Created]:
    from moto.cloudformation.models import cloudformation_backends

    with embedded_aws():
        site = create_site()
        site.extra_parameters.update({} if request.param == "defaults" else FLIPPED)
        if request.param != "defaults":
            key = boto3.client("secretsmanager").create_secret(Name="pagerduty", SecretString="routing-key")
            site.extra_parameters["PagingSecretArn"] = key["ARN"]
        stack = create_stack(ROOT, site.stack_parameters())
        values = {key: parameter_text(value) for key, value in site.stack_parameters().items()}
        translated = translate(ROOT / "template.yaml", values)
        models = cloudformation_backends[ACCOUNT][REGION].get_stack(stack.name).resource_map
        pseudo = {
            "AWS::AccountId": ACCOUNT,
            "AWS::Region": REGION,
            "AWS::Partition": "aws",
            "AWS::StackName": stack.name,
            "AWS::URLSuffix": "amazonaws.com",
        }
        conditions = evaluate_conditions(translated, stack.parameters)
        context = Context(
            stack.parameters,
            pseudo,
            stack.ref,
            lambda logical_id, attribute: models[logical_id].get_cfn_attribute(attribute),
            conditions,
        )
        yield Created(
            stack,
            translated,
            conditions,
            Resolver(translated, context).resolve,
            lambda logical_id, attribute: models[logical_id].get_cfn_attribute(attribute),
        )
        stack.stop_running_executions()


def test_every_resource_whose_condition_holds_is_created_and_no_other(created: Created) -> None:
    described = boto3.client("cloudformation").describe_stack_resources(StackName=created.stack.name)
    listed = {
        r["LogicalResourceId"]: r["ResourceType"]
        for r in described["StackResources"]
        if r.get("LogicalResourceId")
    }
    assert listed == {logical_id: r["Type"] for logical_id, r in created.active().items()}
    assert len(listed) > 100
    skipped = set(created.translated["Resources"]) - set(listed)
    assert all(created.translated["Resources"][logical_id].get("Condition") for logical_id in skipped)


def test_every_resource_keeps_what_the_template_gives_it(created: Created) -> None:
    differences = []
    for logical_id, resource in created.active().items():
        kind = resource["Type"]
        if kind in shims.NO_EFFECT or (kind, "*") in WITHOUT_EFFECT:
            continue
        properties = created.resolve(resource.get("Properties", {}))
        observed, expected = OBSERVERS[kind](created, logical_id, properties)
        if observed != expected:
            differences.append((logical_id, observed, expected))
    assert differences == []


def test_every_state_machine_is_fully_substituted(created: Created) -> None:
    sfn = boto3.client("stepfunctions")
    machines = [p for p in created.stack.resources.values() if p.type == "AWS::StepFunctions::StateMachine"]
    assert len(machines) == 3  # verification, drill, restore of redundancy
    for machine in machines:
        definition = sfn.describe_state_machine(stateMachineArn=machine.ref)["definition"]
        assert "${" not in definition
        assert created.stack.function("HealthCheckFunction").arn in definition or "Drill" in machine.ref


def test_the_outputs_are_the_templates(created: Created) -> None:
    expected = {
        key: parameter_text(created.resolve(output["Value"]))
        for key, output in created.translated["Outputs"].items()
        if created.conditions.get(output.get("Condition", ""), True)
    }
    assert created.stack.outputs == expected
    assert len(expected) >= 15


def test_functions_run_with_the_templates_retries_and_dead_letter_queues(created: Created) -> None:
    watchdog = created.stack.functions.get("WatchdogFunction")
    assert watchdog is not None
    assert watchdog.max_retries == 0
    ingestion = created.stack.function("ControllerStatusFunction")
    assert ingestion.max_retries == 2
    queue = created.stack.ref("ControllerStatusDeadLetterQueue")
    arn = boto3.client("sqs").get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])
    assert ingestion.dead_letter_queue_arn == arn["Attributes"]["QueueArn"]
    assert ingestion.code_dir == (ROOT / "functions" / "controller_status").resolve()


# What moto's backends hold for one resource, and what the template says they should hold.
Observed = tuple[dict[str, Any], dict[str, Any]]


def _without_effect(kind: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in properties.items() if (kind, key) not in WITHOUT_EFFECT}


def _function(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    lambda_ = boto3.client("lambda")
    name = created.stack.ref(logical_id)
    config = lambda_.get_function_configuration(FunctionName=name)
    spec = created.stack.function(logical_id)
    observed = {
        "Handler": config["Handler"],
        "Runtime": config["Runtime"],
        "Timeout": config["Timeout"],
        "MemorySize": config["MemorySize"],
        "Role": config["Role"],
        "Environment": config["Environment"]["Variables"],
        "Layers": [layer["Arn"] for layer in config["Layers"]],
        "Architectures": config["Architectures"],
        "TracingConfig": config["TracingConfig"]["Mode"],
        "DeadLetterConfig": spec.dead_letter_queue_arn,  # moto keeps none: the deliveries use this
        "VpcConfig": {k: config.get("VpcConfig", {}).get(k) for k in ("SubnetIds", "SecurityGroupIds")},
        "Reserved": lambda_.get_function_concurrency(FunctionName=name).get("ReservedConcurrentExecutions"),
        "Spec": (spec.handler, dict(spec.environment), spec.timeout, spec.memory),
    }
    variables = {key: parameter_text(value) for key, value in properties["Environment"]["Variables"].items()}
    vpc = properties.get("VpcConfig", {})
    expected = {
        **{key: properties[key] for key in ("Handler", "Runtime", "Timeout", "MemorySize", "Role")},
        "Environment": variables,
        "Layers": properties["Layers"],
        "Architectures": properties["Architectures"],
        "TracingConfig": properties["TracingConfig"]["Mode"],
        "DeadLetterConfig": properties.get("DeadLetterConfig", {}).get("TargetArn"),
        "VpcConfig": {k: vpc.get(k) for k in ("SubnetIds", "SecurityGroupIds")},
        "Reserved": properties.get("ReservedConcurrentExecutions"),
        "Spec": (properties["Handler"], variables, properties["Timeout"], properties["MemorySize"]),
    }
    return observed, expected


def _invoke_config(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    config = boto3.client("lambda").get_function_event_invoke_config(FunctionName=properties["FunctionName"])
    function = next(s for s in created.stack.functions.values() if s.name == properties["FunctionName"])
    observed = {"retries": config["MaximumRetryAttempts"], "spec": function.max_retries}
    return observed, {
        "retries": properties["MaximumRetryAttempts"],
        "spec": properties["MaximumRetryAttempts"],
    }


def _state_machine(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    machine = boto3.client("stepfunctions").describe_state_machine(
        stateMachineArn=created.stack.ref(logical_id)
    )
    text = properties["DefinitionString"]
    for key, value in properties["DefinitionSubstitutions"].items():
        text = text.replace("${" + key + "}", parameter_text(value))
    observed = {
        "definition": json.loads(machine["definition"]),
        "role": machine["roleArn"],
        "type": machine["type"],
    }
    return observed, {"definition": json.loads(text), "role": properties["RoleArn"], "type": "STANDARD"}


def _alarm(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    (alarm,) = boto3.client("cloudwatch").describe_alarms(AlarmNames=[created.stack.ref(logical_id)])[
        "MetricAlarms"
    ]
    observed = {key: alarm.get(key) for key in properties}
    # Fn::GetAtt Arn is the ARN CloudWatch gives the alarm.
    observed["Fn::GetAtt Arn"] = created.attribute(logical_id, "Arn")
    return observed, {**properties, "Fn::GetAtt Arn": alarm["AlarmArn"]}


def _schedule(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    schedule = boto3.client("scheduler").get_schedule(Name=created.stack.ref(logical_id))
    observed = {key: schedule.get(key) for key in properties}
    observed["Target"] = {key: schedule["Target"].get(key) for key in properties["Target"]}
    return observed, properties


def _rotation_schedule(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    secret = boto3.client("secretsmanager").describe_secret(SecretId=properties["SecretId"])
    observed = {
        "enabled": secret.get("RotationEnabled"),
        "function": secret.get("RotationLambdaARN"),
        "rules": f"rate({secret['RotationRules']['AutomaticallyAfterDays']} days)",
    }
    rules = properties["RotationRules"]["ScheduleExpression"]
    return observed, {"enabled": True, "function": properties["RotationLambdaARN"], "rules": rules}


def _subscription(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    sns = boto3.client("sns")
    listed = sns.list_subscriptions_by_topic(TopicArn=properties["TopicArn"])["Subscriptions"]
    (found,) = [s for s in listed if s["SubscriptionArn"] == created.stack.ref(logical_id)]
    # The other properties are the subscription's attributes (a policy as JSON text).
    attributes = sns.get_subscription_attributes(SubscriptionArn=found["SubscriptionArn"])["Attributes"]
    observed = {
        key: found[key] if key in found else _json_or_text(attributes.get(key), properties[key])
        for key in properties
    }
    expected = {
        key: value if key in found or isinstance(value, dict) else parameter_text(value)
        for key, value in properties.items()
    }
    return observed, expected


def _json_or_text(attribute: str | None, expected: Any) -> Any:
    return json.loads(attribute) if isinstance(expected, dict) and attribute is not None else attribute


def _topic(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    attributes = boto3.client("sns").get_topic_attributes(TopicArn=created.stack.ref(logical_id))[
        "Attributes"
    ]
    return {key: attributes.get(key) for key in properties}, properties


def _queue(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    attributes = boto3.client("sqs").get_queue_attributes(
        QueueUrl=created.stack.ref(logical_id), AttributeNames=["All"]
    )["Attributes"]
    # A policy (RedrivePolicy) is JSON text; its numbers compared as text, as SQS keeps them.
    observed = {
        key: _texts(json.loads(attributes[key]))
        if isinstance(value, dict) and key in attributes
        else attributes.get(key)
        for key, value in properties.items()
    }
    return observed, {
        k: _texts(v) if isinstance(v, dict) else parameter_text(v) for k, v in properties.items()
    }


def _texts(policy: dict[str, Any]) -> dict[str, str]:
    return {key: parameter_text(value) for key, value in policy.items()}


def _table(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    table = boto3.client("dynamodb").describe_table(TableName=created.stack.ref(logical_id))["Table"]
    observed = {
        "BillingMode": table["BillingModeSummary"]["BillingMode"],
        "AttributeDefinitions": table["AttributeDefinitions"],
        "KeySchema": table["KeySchema"],
    }
    return observed, _without_effect("AWS::DynamoDB::Table", properties)


def _document(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    document = boto3.client("ssm").get_document(Name=created.stack.ref(logical_id))
    observed = {key: document[key] for key in ("DocumentType", "DocumentFormat")}
    return {**observed, "Content": json.loads(document["Content"])}, properties


def _rule(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    events = boto3.client("events")
    rule = events.describe_rule(Name=created.stack.ref(logical_id))
    targets = events.list_targets_by_rule(Rule=created.stack.ref(logical_id))["Targets"]
    observed = {"EventPattern": json.loads(rule["EventPattern"]), "Targets": targets}
    if "Description" in properties:
        observed["Description"] = rule["Description"]
    return observed, properties


def _log_group(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    name = created.stack.ref(logical_id)
    (group,) = boto3.client("logs").describe_log_groups(logGroupNamePrefix=name)["logGroups"]
    return {
        "LogGroupName": group["logGroupName"],
        "RetentionInDays": group.get("retentionInDays"),
    }, properties


def _role(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    iam = boto3.client("iam")
    name = created.stack.ref(logical_id)
    role = iam.get_role(RoleName=name)["Role"]
    shown = [key for key in ("AssumeRolePolicyDocument", "Description") if key in properties]
    observed: dict[str, Any] = {key: role.get(key) for key in shown}
    observed["Policies"] = [
        {
            "PolicyName": policy,
            "PolicyDocument": iam.get_role_policy(RoleName=name, PolicyName=policy)["PolicyDocument"],
        }
        for policy in sorted(iam.list_role_policies(RoleName=name)["PolicyNames"])
    ]
    expected = {key: properties[key] for key in shown}
    policies = sorted(properties.get("Policies", []), key=lambda policy: str(policy["PolicyName"]))
    return observed, {**expected, "Policies": policies}


def _key(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    kms = boto3.client("kms")
    key = created.stack.ref(logical_id)
    observed = {
        "Description": kms.describe_key(KeyId=key)["KeyMetadata"]["Description"],
        "KeyPolicy": json.loads(kms.get_key_policy(KeyId=key, PolicyName="default")["Policy"]),
        "EnableKeyRotation": kms.get_key_rotation_status(KeyId=key)["KeyRotationEnabled"],
    }
    return observed, properties


def _dashboard(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    dashboard = boto3.client("cloudwatch").get_dashboard(DashboardName=created.stack.ref(logical_id))
    observed = {
        "DashboardName": dashboard["DashboardName"],
        "DashboardBody": json.loads(dashboard["DashboardBody"]),
    }
    return observed, {**properties, "DashboardBody": json.loads(properties["DashboardBody"])}


def _layer(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    *_, name, version = created.stack.ref(logical_id).split(":")  # moto lacks GetLayerVersionByArn
    layer = boto3.client("lambda").get_layer_version(LayerName=name, VersionNumber=int(version))
    observed = {key: layer.get(key) for key in properties if key not in ("Content", "LayerName")}
    return observed, {key: value for key, value in properties.items() if key not in ("Content", "LayerName")}


def _connection(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    events = boto3.client("events")
    connection = events.describe_connection(Name=created.stack.ref(logical_id))
    # The key as EventBridge keeps it: in the connection's own secret, resolved from PagingSecretArn.
    kept = boto3.client("secretsmanager").get_secret_value(SecretId=connection["SecretArn"])["SecretString"]
    api_key = properties["AuthParameters"]["ApiKeyAuthParameters"]
    observed = {
        "Description": connection["Description"],
        "AuthorizationType": connection["AuthorizationType"],
        "ApiKeyName": json.loads(kept)["api_key_name"],
        "Resolved": "{{resolve:" not in kept and "routing-key" in kept,
    }
    expected = {
        "Description": properties["Description"],
        "AuthorizationType": properties["AuthorizationType"],
        "ApiKeyName": api_key["ApiKeyName"],
        "Resolved": True,
    }
    return observed, expected


def _api_destination(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    destination = boto3.client("events").describe_api_destination(Name=created.stack.ref(logical_id))
    return {key: destination[key] for key in properties}, properties


def _pipe(created: Created, logical_id: str, properties: dict[str, Any]) -> Observed:
    pipe = boto3.client("pipes").describe_pipe(Name=created.stack.ref(logical_id))
    return {key: pipe[key] for key in properties}, properties


OBSERVERS: dict[str, Callable[[Created, str, dict[str, Any]], Observed]] = {
    "AWS::Events::Connection": _connection,
    "AWS::Events::ApiDestination": _api_destination,
    "AWS::Pipes::Pipe": _pipe,
    "AWS::Lambda::Function": _function,
    "AWS::Lambda::EventInvokeConfig": _invoke_config,
    "AWS::Lambda::LayerVersion": _layer,
    "AWS::StepFunctions::StateMachine": _state_machine,
    "AWS::CloudWatch::Alarm": _alarm,
    "AWS::CloudWatch::Dashboard": _dashboard,
    "AWS::Scheduler::Schedule": _schedule,
    "AWS::SecretsManager::RotationSchedule": _rotation_schedule,
    "AWS::SNS::Subscription": _subscription,
    "AWS::SNS::Topic": _topic,
    "AWS::SQS::Queue": _queue,
    "AWS::DynamoDB::Table": _table,
    "AWS::SSM::Document": _document,
    "AWS::Events::Rule": _rule,
    "AWS::Logs::LogGroup": _log_group,
    "AWS::IAM::Role": _role,
    "AWS::KMS::Key": _key,
}


def test_every_type_of_the_template_is_checked_here() -> None:
    kinds = {r["Type"] for r in translate(ROOT / "template.yaml")["Resources"].values()}
    unchecked = (
        kinds - set(OBSERVERS) - set(shims.NO_EFFECT) - {kind for kind, key in WITHOUT_EFFECT if key == "*"}
    )
    assert unchecked == set(), "a new resource type: say here what moto must keep of it"
