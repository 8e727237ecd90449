"""A shim as moto's CloudFormation sees a resource model: ``create_from_cloudformation_json``
gets the properties resolved (Ref, Fn::GetAtt, Fn::Sub, Fn::If, conditions); what it returns
answers Ref (``physical_resource_id``) and Fn::GetAtt. A shim creates its resource through the
service's API (botocore checks each request against the API's model), which moto answers."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar

import boto3


@functools.cache
def client(service: str, region: str) -> Any:
    """One client per service while a stack is created (``registered`` forgets them after)."""
    return boto3.client(service, region_name=region)  # type: ignore[call-overload]


class Shim:
    """A resource a shim created: what Ref (its physical id) and Fn::GetAtt answer. As it is, the
    model of a resource that moto would keep without effect (``NO_EFFECT``): nothing is created."""

    TYPE: ClassVar[str] = ""
    NAME: ClassVar[str] = ""  # the property that names the resource, when it has one

    def __init__(self, physical_id: str, properties: Mapping[str, Any], **attributes: str) -> None:
        self.physical_resource_id = physical_id
        self.properties = properties
        self.attributes = attributes

    @classmethod
    def cloudformation_type(cls) -> str:
        return cls.TYPE

    @classmethod
    def has_cfn_attr(cls, attribute: str) -> bool:
        return True  # asked for an output's Fn::GetAtt: a wrong one fails in get_cfn_attribute

    def get_cfn_attribute(self, attribute: str) -> str:
        from moto.cloudformation.exceptions import UnformattedGetAttTemplateException

        if attribute not in self.attributes:
            raise UnformattedGetAttTemplateException()
        return self.attributes[attribute]

    def is_created(self) -> bool:
        return True

    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **_: Any,
    ) -> Shim:
        properties = cloudformation_json["Properties"]
        name = str(properties.get(cls.NAME) or resource_name) if cls.NAME else resource_name
        return cls.create(name, properties, account_id, region_name)

    @classmethod
    def create(cls, name: str, properties: dict[str, Any], account: str, region: str) -> Shim:
        return cls(name, properties)
