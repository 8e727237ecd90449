"""AWS::IAM::Role and AWS::KMS::Key with their policy documents as JSON. moto 5.2.5's models keep
a document as the object the template gives: GetRolePolicy then answers Python's text of it,
and moto's KMS, which reads a key's policy as JSON on each call, fails on every call to the key.
moto's own models here, given each document as JSON text, as CloudFormation sends it.

Not attached, as before: a role's ``ManagedPolicyArns`` (moto knows AWS's managed policies only
when told to load its whole list). moto evaluates no policy either way: the IAM tests read the
translated template."""

from __future__ import annotations

import json
from typing import Any

from moto.iam.models import Role as MotoRole
from moto.kms.models import Key as MotoKey


class Role(MotoRole):
    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **kwargs: Any,
    ) -> MotoRole:
        properties = cloudformation_json["Properties"]
        policies = [
            {**policy, "PolicyDocument": json.dumps(policy["PolicyDocument"])}
            for policy in properties.get("Policies", [])
        ]
        as_sent = {**cloudformation_json, "Properties": {**properties, "Policies": policies}}
        return MotoRole.create_from_cloudformation_json(
            resource_name, as_sent, account_id, region_name, **kwargs
        )


class Key(MotoKey):
    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **kwargs: Any,
    ) -> MotoKey:
        properties = cloudformation_json["Properties"]
        as_sent = {
            **cloudformation_json,
            "Properties": {**properties, "KeyPolicy": json.dumps(properties["KeyPolicy"])},
        }
        return MotoKey.create_from_cloudformation_json(
            resource_name, as_sent, account_id, region_name, **kwargs
        )
