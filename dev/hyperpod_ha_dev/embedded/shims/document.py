"""AWS::SSM::Document. moto 5.2.5's model hands a ``Content`` given as an object (as this template
gives its documents) to the backend as it is, which keeps Python's text of it, not JSON; and
names an unnamed document with a bare UUID where CloudFormation uses the stack's name, the
logical id and a suffix. CreateDocument here, with the content as JSON (or YAML)."""

from __future__ import annotations

import json
from typing import Any

import yaml

from hyperpod_ha_dev.embedded.shims.model import Shim, client


class Document(Shim):
    TYPE = "AWS::SSM::Document"
    NAME = "Name"

    @classmethod
    def create(cls, name: str, properties: dict[str, Any], account: str, region: str) -> Shim:
        request = {
            key: value for key, value in properties.items() if key != "UpdateMethod"
        }  # CloudFormation's own
        content = properties["Content"]
        if not isinstance(content, str):
            as_yaml = properties.get("DocumentFormat") == "YAML"
            request["Content"] = yaml.safe_dump(content) if as_yaml else json.dumps(content)
        client("ssm", region).create_document(**{**request, "Name": name})
        return cls(name, properties)
