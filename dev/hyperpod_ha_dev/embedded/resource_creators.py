"""Creating each resource type of the template on moto, with its resolved properties."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import boto3

from hyperpod_ha_dev.embedded import delivery
from hyperpod_ha_dev.embedded.cfn import (
    Resolver,
    TemplateError,
)
from hyperpod_ha_dev.embedded.created_stack import ACCOUNT, Physical
from hyperpod_ha_dev.embedded.function_spec import function_spec, parameter_text, zip_sources
from hyperpod_ha_dev.embedded.functions import FunctionSpec


class ResourceCreators:
    """One ``_create_<type>`` per resource type; :class:`~hyperpod_ha_dev.embedded.builder.StackBuilder`
    calls them in its creation order."""

    root: Path
    template: dict[str, Any]
    name: str
    region: str
    resources: dict[str, Physical]
    functions: dict[str, FunctionSpec]
    resolver: Resolver

    def _physical_name(self, logical_id: str) -> str:
        return f"{self.name}-{logical_id}"[:64]

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
        # The template names its alarms (the topic policy admits only this stack's names).
        name = str(props.get("AlarmName") or self._physical_name(logical_id))
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
            Code={"ZipFile": zip_sources(spec.code_dir)},
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
        substitutions = {
            key: parameter_text(value) for key, value in props.get("DefinitionSubstitutions", {}).items()
        }

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
