"""AWS::Events::Connection and AWS::Events::ApiDestination. moto 5.2.6 has EventBridge's
CreateConnection and CreateApiDestination but no CloudFormation model for either, and its
CloudFormation resolves no dynamic reference: a ``{{resolve:secretsmanager:<secret>}}`` in a
connection's parameters is read here from Secrets Manager, as CloudFormation reads it at deploy.
moto keeps the connection's parameters in a secret of its own, as EventBridge does; nothing in
moto ever calls a destination (:mod:`hyperpod_ha_dev.embedded.pipes` does)."""

from __future__ import annotations

import re
from typing import Any

from hyperpod_ha_dev.embedded.shims.model import Shim, client

# CloudFormation's dynamic reference to a whole secret string by ARN (the only form the template
# uses); any other dynamic reference is refused.
_SECRET_REFERENCE = re.compile(
    r"\{\{resolve:secretsmanager:(arn:[^:}]+:secretsmanager:[^:}]+:\d{12}:secret:[^:}]+)\}\}"
)


def resolved(value: Any, region: str) -> Any:
    """``value`` with every ``{{resolve:secretsmanager:<arn>}}`` replaced by the secret's string."""
    if isinstance(value, dict):
        return {key: resolved(item, region) for key, item in value.items()}
    if isinstance(value, list):
        return [resolved(item, region) for item in value]
    if isinstance(value, str):
        secrets = client("secretsmanager", region)
        text = _SECRET_REFERENCE.sub(
            lambda match: str(secrets.get_secret_value(SecretId=match.group(1))["SecretString"]), value
        )
        if "{{resolve:" in text:
            raise ValueError("the embedded stack resolves only {{resolve:secretsmanager:<secret ARN>}}")
        return text
    return value


class Connection(Shim):
    TYPE = "AWS::Events::Connection"
    NAME = "Name"

    @classmethod
    def create(cls, name: str, properties: dict[str, Any], account: str, region: str) -> Shim:
        created = client("events", region).create_connection(
            Name=name,
            Description=properties.get("Description", ""),
            AuthorizationType=properties["AuthorizationType"],
            AuthParameters=resolved(properties["AuthParameters"], region),
        )
        described = client("events", region).describe_connection(Name=name)
        return cls(name, properties, Arn=created["ConnectionArn"], SecretArn=described["SecretArn"])


class ApiDestination(Shim):
    TYPE = "AWS::Events::ApiDestination"
    NAME = "Name"

    @classmethod
    def create(cls, name: str, properties: dict[str, Any], account: str, region: str) -> Shim:
        optional = {
            key: properties[key]
            for key in ("Description", "InvocationRateLimitPerSecond")
            if key in properties
        }
        created = client("events", region).create_api_destination(
            Name=name,
            ConnectionArn=properties["ConnectionArn"],
            InvocationEndpoint=properties["InvocationEndpoint"],
            HttpMethod=properties["HttpMethod"],
            **{key: int(value) if key.endswith("Second") else value for key, value in optional.items()},
        )
        return cls(name, properties, Arn=created["ApiDestinationArn"])
