"""AWS::SNS::Subscription. moto 5.2.5 has no CloudFormation model for it (only a topic's inline
``Subscription`` list): the functions' SNS event sources and the e-mail subscription were
skipped. Subscribe with the subscription's other properties as attributes, as CloudFormation."""

from __future__ import annotations

import json
from typing import Any

from hyperpod_ha_dev.embedded.function_spec import parameter_text
from hyperpod_ha_dev.embedded.shims.model import Shim, client

_NOT_ATTRIBUTES = {"TopicArn", "Protocol", "Endpoint", "Region"}


class Subscription(Shim):
    TYPE = "AWS::SNS::Subscription"

    @classmethod
    def create(cls, name: str, properties: dict[str, Any], account: str, region: str) -> Shim:
        attributes = {
            key: json.dumps(value) if isinstance(value, dict) else parameter_text(value)
            for key, value in properties.items()
            if key not in _NOT_ATTRIBUTES
        }
        arn = client("sns", region).subscribe(
            TopicArn=properties["TopicArn"],
            Protocol=properties["Protocol"],
            Endpoint=properties["Endpoint"],
            Attributes=attributes,
            ReturnSubscriptionArn=True,
        )["SubscriptionArn"]
        return cls(arn, properties)
