"""AWS::IAM::Role and AWS::KMS::Key with their policy documents as JSON. moto 5.2.5's models keep
a document as the object the template gives: GetRolePolicy then answers Python's text of it,
and moto's KMS, which reads a key's policy as JSON on each call, fails on every call to the key.
moto's own models here, given each document as JSON text, as CloudFormation sends it.

Not attached, as before: a role's ``ManagedPolicyArns`` (moto knows AWS's managed policies only
when told to load its whole list). moto evaluates no policy either way: the IAM tests read the
translated template."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from moto.iam.models import Role
from moto.kms.models import Key

Properties = dict[str, Any]


@dataclass(frozen=True)
class JsonDocuments:
    """moto's own model, handed the properties with their policy documents as JSON text."""

    model: Any
    as_json: Callable[[Properties], Properties]

    def cloudformation_type(self) -> str:
        return str(self.model.cloudformation_type())

    def has_cfn_attr(self, attribute: str) -> bool:
        return bool(self.model.has_cfn_attr(attribute))

    def create_from_cloudformation_json(
        self, resource_name: str, cloudformation_json: dict[str, Any], *args: Any, **kwargs: Any
    ) -> Any:
        properties = self.as_json(cloudformation_json["Properties"])
        as_sent = {**cloudformation_json, "Properties": properties}
        return self.model.create_from_cloudformation_json(resource_name, as_sent, *args, **kwargs)


def _role(properties: Properties) -> Properties:
    policies = properties.get("Policies", [])
    return {
        **properties,
        "Policies": [{**p, "PolicyDocument": json.dumps(p["PolicyDocument"])} for p in policies],
    }


ROLE = JsonDocuments(Role, _role)
KEY = JsonDocuments(Key, lambda properties: {**properties, "KeyPolicy": json.dumps(properties["KeyPolicy"])})
