"""AWS::Lambda::Function and AWS::Lambda::LayerVersion. moto 5.2.5's function model hands
CreateFunction only Code, Handler, Role, Runtime, Description, MemorySize, Publish, Timeout,
VpcConfig, Environment and ReservedConcurrentExecutions (Layers, Architectures, TracingConfig,
LoggingConfig, DeadLetterConfig, Tags were dropped), and numbers in the environment stayed numbers
(Lambda keeps text); its layer version answers Ref with itself, not the version's ARN. Here the
API gets every property. moto's Lambda keeps no DeadLetterConfig: ``properties`` keeps it for the
asynchronous deliveries (``delivery``)."""

from __future__ import annotations

from typing import Any

from hyperpod_ha_dev.embedded.function_spec import parameter_text
from hyperpod_ha_dev.embedded.shims.model import Shim, client

# CloudFormation's properties that are not CreateFunction's, or not under the same name.
_NOT_CREATE_FUNCTION = {"Tags", "ReservedConcurrentExecutions", "KmsKeyArn", "Environment"}


class Function(Shim):
    TYPE = "AWS::Lambda::Function"
    NAME = "FunctionName"

    @classmethod
    def create(cls, name: str, properties: dict[str, Any], account: str, region: str) -> Shim:
        request = {key: value for key, value in properties.items() if key not in _NOT_CREATE_FUNCTION}
        variables = properties.get("Environment", {}).get("Variables", {})
        request["Environment"] = {
            "Variables": {key: parameter_text(value) for key, value in variables.items()}
        }
        request["Tags"] = {tag["Key"]: tag["Value"] for tag in properties.get("Tags", [])}
        if "KmsKeyArn" in properties:
            request["KMSKeyArn"] = properties["KmsKeyArn"]
        lambda_ = client("lambda", region)
        arn = lambda_.create_function(**{**request, "FunctionName": name})["FunctionArn"]
        if "ReservedConcurrentExecutions" in properties:
            reserved = int(properties["ReservedConcurrentExecutions"])
            lambda_.put_function_concurrency(FunctionName=name, ReservedConcurrentExecutions=reserved)
        return cls(name, properties, Arn=arn)


class LayerVersion(Shim):
    TYPE = "AWS::Lambda::LayerVersion"
    NAME = "LayerName"

    @classmethod
    def create(cls, name: str, properties: dict[str, Any], account: str, region: str) -> Shim:
        answer = client("lambda", region).publish_layer_version(**{**properties, "LayerName": name})
        return cls(answer["LayerVersionArn"], properties)
