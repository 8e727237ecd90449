"""AWS::Pipes::Pipe. moto 5.2.6 has EventBridge Pipes' CreatePipe but no CloudFormation model for
it, and its pipes never run: :mod:`hyperpod_ha_dev.embedded.pipes` delivers what a pipe would.
The properties are CreatePipe's, under the same names."""

from __future__ import annotations

from typing import Any

from hyperpod_ha_dev.embedded.shims.model import Shim, client

_PASSED = ("Description", "DesiredState", "SourceParameters", "TargetParameters", "Enrichment")


class Pipe(Shim):
    TYPE = "AWS::Pipes::Pipe"
    NAME = "Name"

    @classmethod
    def create(cls, name: str, properties: dict[str, Any], account: str, region: str) -> Shim:
        optional = {key: properties[key] for key in _PASSED if key in properties}
        created = client("pipes", region).create_pipe(
            Name=name,
            RoleArn=properties["RoleArn"],
            Source=properties["Source"],
            Target=properties["Target"],
            **optional,
        )
        return cls(name, properties, Arn=created["Arn"])
