"""Creating the resources of ``template.yaml`` on moto, in process.

The template is the single description: every function, table, queue, topic, document,
rule and state machine it declares is created here with its resolved properties, and the
functions' real handlers answer moto's Lambda invocations (see ``delivery``).
Resource types the template may use without an effect here (layers, permissions, queue
policies) are listed in ``_WITHOUT_EFFECT``; any other unknown type raises.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import json
import re
import time
import uuid
import warnings
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

from hyperpod_ha_dev.embedded import delivery
from hyperpod_ha_dev.embedded.cfn import (
    Context,
    Resolver,
    TemplateError,
    evaluate_conditions,
    load_template,
    parameter_values,
    with_function_globals,
)
from hyperpod_ha_dev.embedded.functions import FunctionSpec, invoke, new_containers

ACCOUNT = "123456789012"
REGION = "us-east-1"

_CREATION_ORDER = (
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
_WITHOUT_EFFECT = {
    "AWS::Serverless::LayerVersion",  # the package is importable in process
    "AWS::Lambda::Permission",  # moto does not check resource policies
    "AWS::SQS::QueuePolicy",
    "AWS::SNS::TopicPolicy",  # same: who may publish is IAM's business, which moto does not evaluate
}


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
        parameters = {key: _text(value) for key, value in self.parameters.items()}
        body = {
            "Parameters": {key: {"Type": "String"} for key in parameters},
            # CloudFormation wants one resource; moto creates nothing for this one.
            "Resources": {"Marker": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
            "Outputs": {key: {"Value": _text(value)} for key, value in self.outputs.items()},
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


def create_stack(
    root: Path, parameters: Mapping[str, Any], name: str = "hyperpod-ha", region: str = REGION
) -> EmbeddedStack:
    """Create the stack of ``root/template.yaml``; call inside
    :func:`~hyperpod_ha_dev.embedded.site.embedded_aws`
    (or against a moto server)."""
    new_containers()
    template = load_template(root / "template.yaml")
    values = parameter_values(template, parameters)
    stack = _Builder(root, template, values, name, region).build()
    stack.record_in_cloudformation()
    return stack


class _Builder:
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

    def _physical_name(self, logical_id: str) -> str:
        return f"{self.name}-{logical_id}"[:64]

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
        for resource_type in _CREATION_ORDER:
            for logical_id, resource in declared:
                if resource["Type"] == resource_type:
                    properties = resource.get("Properties", {})
                    getattr(self, "_create_" + resource_type.split("::")[-1].lower())(logical_id, properties)
        unknown = {r["Type"] for _, r in declared} - set(_CREATION_ORDER) - _WITHOUT_EFFECT
        if unknown:
            raise TemplateError(f"the embedded stack does not know these resource types: {sorted(unknown)}")
        outputs = {
            key: self.resolver.resolve(spec["Value"])
            for key, spec in self.template.get("Outputs", {}).items()
            if "Condition" not in spec or self.conditions[spec["Condition"]]
        }
        return EmbeddedStack(self.name, self.root, self.values, self.resources, self.functions, outputs)

    def _client(self, service: str) -> Any:
        return boto3.client(service, region_name=self.region)  # type: ignore[call-overload]

    def _role(self, name: str, service: str) -> str:
        """An execution role (moto checks that it exists, not what it allows)."""
        trust = {
            "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}]
        }
        return str(
            self._client("iam").create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust))[
                "Role"
            ]["Arn"]
        )

    def _create_loggroup(self, logical_id: str, properties: Mapping[str, Any]) -> None:
        props = self.resolver.resolve(properties)
        name = props.get("LogGroupName", self._physical_name(logical_id))
        logs = self._client("logs")
        logs.create_log_group(logGroupName=name)
        if "RetentionInDays" in props:
            logs.put_retention_policy(logGroupName=name, retentionInDays=int(props["RetentionInDays"]))
        arn = f"arn:aws:logs:{self.region}:{ACCOUNT}:log-group:{name}:*"
        self.resources[logical_id] = Physical(name, {"Arn": arn})

    def _create_key(self, logical_id: str, properties: Mapping[str, Any]) -> None:
        props = self.resolver.resolve(properties)
        key = self._client("kms").create_key(
            Description=props.get("Description", ""), Policy=json.dumps(props["KeyPolicy"])
        )["KeyMetadata"]
        self.resources[logical_id] = Physical(key["KeyId"], {"Arn": key["Arn"], "KeyId": key["KeyId"]})

    def _create_rule(self, logical_id: str, properties: Mapping[str, Any]) -> None:
        props = self.resolver.resolve(properties)
        name = self._physical_name(logical_id)
        events = self._client("events")
        arn = events.put_rule(
            Name=name,
            EventPattern=json.dumps(props["EventPattern"]),
            Description=props.get("Description", ""),
        )["RuleArn"]
        targets = [{"Id": target["Id"], "Arn": target["Arn"]} for target in props.get("Targets", [])]
        if targets:
            events.put_targets(Rule=name, Targets=targets)
        self.resources[logical_id] = Physical(name, {"Arn": arn})

    def _create_alarm(self, logical_id: str, properties: Mapping[str, Any]) -> None:
        props = self.resolver.resolve(properties)
        name = self._physical_name(logical_id)
        fields = (
            "AlarmDescription", "Namespace", "MetricName", "Dimensions", "Statistic", "Period",
            "EvaluationPeriods", "Threshold", "ComparisonOperator", "TreatMissingData",
            "AlarmActions", "OKActions",
        )  # fmt: skip
        alarm = {key: props[key] for key in fields if key in props}
        for number in ("Period", "EvaluationPeriods"):
            alarm[number] = int(alarm[number])
        alarm["Threshold"] = float(alarm["Threshold"])
        self._client("cloudwatch").put_metric_alarm(AlarmName=name, **alarm)
        self.resources[logical_id] = Physical(
            name, {"Arn": f"arn:aws:cloudwatch:{self.region}:{ACCOUNT}:alarm:{name}"}
        )

    def _create_table(self, logical_id: str, properties: Mapping[str, Any]) -> None:
        props = self.resolver.resolve(properties)
        name = self._physical_name(logical_id)
        ddb = self._client("dynamodb")
        description = ddb.create_table(
            TableName=name,
            AttributeDefinitions=props["AttributeDefinitions"],
            KeySchema=props["KeySchema"],
            BillingMode=props.get("BillingMode", "PAY_PER_REQUEST"),
            # CloudFormation says SSEEnabled where the API says Enabled.
            SSESpecification={"Enabled": bool(props.get("SSESpecification", {}).get("SSEEnabled", False))},
        )["TableDescription"]
        ttl = props.get("TimeToLiveSpecification")
        if ttl:
            ddb.update_time_to_live(TableName=name, TimeToLiveSpecification=ttl)
        self.resources[logical_id] = Physical(name, {"Arn": description["TableArn"]})

    def _create_queue(self, logical_id: str, properties: Mapping[str, Any]) -> None:
        props = self.resolver.resolve(properties)
        name = self._physical_name(logical_id)
        attributes = {
            key: str(value).lower() if isinstance(value, bool) else str(value) for key, value in props.items()
        }
        url = self._client("sqs").create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
        arn = f"arn:aws:sqs:{self.region}:{ACCOUNT}:{name}"
        self.resources[logical_id] = Physical(url, {"Arn": arn, "QueueName": name, "QueueUrl": url})

    def _create_topic(self, logical_id: str, properties: Mapping[str, Any]) -> None:
        props = self.resolver.resolve(properties)
        attributes = {
            "DisplayName": props.get("DisplayName", ""),
            "KmsMasterKeyId": props.get("KmsMasterKeyId", ""),
        }
        arn = self._client("sns").create_topic(Name=self._physical_name(logical_id), Attributes=attributes)[
            "TopicArn"
        ]
        self.resources[logical_id] = Physical(arn, {"TopicArn": arn, "TopicName": arn.rsplit(":", 1)[-1]})

    def _create_subscription(self, logical_id: str, properties: Mapping[str, Any]) -> None:
        props = self.resolver.resolve(properties)
        arn = self._client("sns").subscribe(
            TopicArn=props["TopicArn"], Protocol=props["Protocol"], Endpoint=props["Endpoint"]
        )["SubscriptionArn"]
        self.resources[logical_id] = Physical(arn)

    def _create_document(self, logical_id: str, properties: Mapping[str, Any]) -> None:
        props = self.resolver.resolve(properties)
        name = self._physical_name(logical_id)
        self._client("ssm").create_document(
            Name=name,
            Content=json.dumps(props["Content"]),
            DocumentType=props.get("DocumentType", "Command"),
            DocumentFormat=props.get("DocumentFormat", "JSON"),
        )
        self.resources[logical_id] = Physical(name)

    def _create_function(self, logical_id: str, _properties: Mapping[str, Any]) -> None:
        physical = self.resources[logical_id]
        spec, props = function_spec(
            self.root, self.template, self.resolver, logical_id, physical.ref, physical.attributes["Arn"]
        )
        role = self._role(f"{physical.ref}-role"[:64], "lambda.amazonaws.com")
        self._client("lambda").create_function(
            FunctionName=spec.name,
            Runtime=props["Runtime"],
            Role=role,
            Handler=spec.handler,
            Code={"ZipFile": _zip(spec.code_dir)},
            Timeout=spec.timeout,
            MemorySize=spec.memory,
            Architectures=props.get("Architectures", ["x86_64"]),
            Environment={"Variables": dict(spec.environment)},
        )
        delivery.register(spec)
        self.functions[logical_id] = spec
        for event_name, event in props.get("Events", {}).items():
            self._create_event_source(spec, event_name, event)

    def _create_event_source(self, spec: FunctionSpec, event_name: str, event: Mapping[str, Any]) -> None:
        kind, props = event["Type"], event.get("Properties", {})
        if kind == "SNS":
            self._client("sns").subscribe(TopicArn=props["Topic"], Protocol="lambda", Endpoint=spec.arn)
        elif kind == "EventBridgeRule":
            events = self._client("events")
            rule = f"{self.name}-{spec.logical_id}-{event_name}"[:64]
            events.put_rule(Name=rule, EventPattern=json.dumps(props["Pattern"]), State="ENABLED")
            target: dict[str, Any] = {"Id": f"{spec.logical_id}"[:64], "Arn": spec.arn}
            if "DeadLetterConfig" in props:
                target["DeadLetterConfig"] = props["DeadLetterConfig"]
            if "RetryPolicy" in props:
                target["RetryPolicy"] = props["RetryPolicy"]
            events.put_targets(Rule=rule, Targets=[target])
        else:
            raise TemplateError(f"event source type {kind} of {spec.logical_id} is not supported")

    def _create_statemachine(self, logical_id: str, properties: Mapping[str, Any]) -> None:
        props = self.resolver.resolve(properties)
        physical = self.resources[logical_id]
        definition = (self.root / props["DefinitionUri"]).read_text()
        substitutions = {key: _text(value) for key, value in props.get("DefinitionSubstitutions", {}).items()}

        def substitute(match: re.Match[str]) -> str:
            key = match.group(1)
            if key not in substitutions:
                raise TemplateError(f"{props['DefinitionUri']} uses ${{{key}}}, which has no substitution")
            return substitutions[key]

        definition = re.sub(r"\$\{([A-Za-z0-9]+)\}", substitute, definition)
        json.loads(definition)  # a broken substitution must fail here, not in an execution
        role = self._role(f"{physical.attributes['Name']}-role"[:64], "states.amazonaws.com")
        self._client("stepfunctions").create_state_machine(
            name=physical.attributes["Name"],
            definition=definition,
            roleArn=role,
            type=props.get("Type", "STANDARD"),
        )

    def _create_dashboard(self, logical_id: str, properties: Mapping[str, Any]) -> None:
        props = self.resolver.resolve(properties)
        name = props.get("DashboardName") or self._physical_name(logical_id)
        json.loads(props["DashboardBody"])  # CloudWatch refuses a body that is not JSON
        self._client("cloudwatch").put_dashboard(DashboardName=name, DashboardBody=props["DashboardBody"])
        self.resources[logical_id] = Physical(name)

    def _create_role(self, logical_id: str, properties: Mapping[str, Any]) -> None:
        props = self.resolver.resolve(properties)
        name = self._physical_name(logical_id)
        iam = self._client("iam")
        arn = iam.create_role(
            RoleName=name, AssumeRolePolicyDocument=json.dumps(props["AssumeRolePolicyDocument"])
        )["Role"]["Arn"]
        for policy in props.get("Policies", []):
            iam.put_role_policy(
                RoleName=name,
                PolicyName=policy["PolicyName"],
                PolicyDocument=json.dumps(policy["PolicyDocument"]),
            )
        self.resources[logical_id] = Physical(name, {"Arn": arn, "RoleId": name})

    def _create_schedule(self, logical_id: str, properties: Mapping[str, Any]) -> None:
        # moto keeps schedules but never fires them: EmbeddedStack.tick delivers a tick.
        props = self.resolver.resolve(properties)
        name = self._physical_name(logical_id)
        arn = self._client("scheduler").create_schedule(
            Name=name,
            Description=props.get("Description", ""),
            ScheduleExpression=props["ScheduleExpression"],
            FlexibleTimeWindow=props["FlexibleTimeWindow"],
            State=props.get("State", "ENABLED"),
            Target=props["Target"],
        )["ScheduleArn"]
        self.resources[logical_id] = Physical(name, {"Arn": arn})

    def _create_rotationschedule(self, logical_id: str, properties: Mapping[str, Any]) -> None:
        # Registered without rotating: CloudFormation would rotate at once only if
        # RotateImmediatelyOnUpdate were true, and this template sets it to false.
        from moto.secretsmanager.models import secretsmanager_backends

        props = self.resolver.resolve(properties)
        secrets = secretsmanager_backends[ACCOUNT][self.region]
        secret: Any = secrets.secrets[props["SecretId"]]
        secret.rotation_lambda_arn = props["RotationLambdaARN"]
        schedule = props.get("RotationRules", {}).get("ScheduleExpression", "")
        days = re.search(r"rate\((\d+) days?\)", schedule)
        secret.auto_rotate_after_days = int(days.group(1)) if days else 0
        secret.rotation_enabled = True
        secret.rotation_requested = True  # moto describes the rotation only once one was asked for
        self.resources[logical_id] = Physical(props["SecretId"])


def function_spec(
    root: Path, template: Mapping[str, Any], resolver: Resolver, logical_id: str, name: str, arn: str
) -> tuple[FunctionSpec, dict[str, Any]]:
    """A template function resolved: its spec (what runs it) and its properties (with Globals)."""
    properties = template["Resources"][logical_id].get("Properties", {})
    props: dict[str, Any] = resolver.resolve(with_function_globals(template, properties))
    environment = {
        key: _text(value) for key, value in props.get("Environment", {}).get("Variables", {}).items()
    }
    spec = FunctionSpec(
        logical_id=logical_id,
        name=name,
        arn=arn,
        code_dir=(root / props["CodeUri"]).resolve(),
        handler=props["Handler"],
        environment=environment,
        timeout=int(props.get("Timeout", 3)),
        memory=int(props.get("MemorySize", 128)),
        max_retries=int(props.get("EventInvokeConfig", {}).get("MaximumRetryAttempts", 2)),
        dead_letter_queue_arn=props.get("DeadLetterQueue", {}).get("TargetArn"),
    )
    return spec, props


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(item) for item in value)
    return str(value)


def _zip(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(directory.rglob("*.py")):
            archive.write(path, path.relative_to(directory))
    return buffer.getvalue()
