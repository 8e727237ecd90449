"""Reading ``template.yaml`` as SAM reads it, and the values a template fixes by itself.

The writers read the hand-written part with it (``template_tail``); the tests, the embedded stack
and the ``hyperpod-ha`` command read the whole file with it. Resolving what needs a stack (a
``Ref``, a condition) is ``hyperpod_ha_dev.cfn``'s.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class TemplateError(ValueError):
    """A template, or a stack created from it, has something these tools cannot follow."""


def load_template(path: Path) -> dict[str, Any]:
    return parse_template(path.read_text(), str(path))


def parse_template(text: str, source: str = "the template") -> dict[str, Any]:
    """A template as SAM's own reader reads it: CloudFormation's tags as intrinsic functions."""
    from samtranslator.yaml_helper import yaml_parse

    loaded = yaml_parse(text)
    if not isinstance(loaded, dict) or "Resources" not in loaded:
        raise TemplateError(f"{source} is not a CloudFormation template")
    return loaded


def find_in_map(template: Mapping[str, Any], argument: list[Any]) -> Any:
    """``Fn::FindInMap`` with its keys resolved (the generated node commands are read with literal
    keys); a key is text, as CloudFormation's ``Ref`` gives a Number parameter."""
    name, top, second = argument
    try:
        return template["Mappings"][name][str(top)][str(second)]
    except (KeyError, TypeError):
        raise TemplateError(f"Fn::FindInMap {argument} names no value in Mappings") from None


def with_fixed_values(template: Mapping[str, Any], value: Any) -> Any:
    """``value`` with what the template fixes by itself evaluated as CloudFormation does:
    ``Fn::FindInMap``, ``Fn::Base64`` of text, and ``Fn::Sub`` of its own variables only (a node
    command is one: the script from ``NodeScripts``, encoded). The rest stays as it is."""
    if isinstance(value, list):
        return [with_fixed_values(template, item) for item in value]
    if not isinstance(value, dict):
        return value
    if list(value) == ["Fn::FindInMap"]:
        return find_in_map(template, value["Fn::FindInMap"])
    fixed = {key: with_fixed_values(template, item) for key, item in value.items()}
    if list(fixed) == ["Fn::Base64"] and isinstance(fixed["Fn::Base64"], str):
        return base64.b64encode(fixed["Fn::Base64"].encode("utf-8")).decode("ascii")
    if list(fixed) == ["Fn::Sub"] and isinstance(fixed["Fn::Sub"], list):
        text, variables = fixed["Fn::Sub"]
        names = {name for literal, name in _SUB_VARIABLE.findall(text) if not literal}
        if all(isinstance(variables.get(name), str) for name in names):
            return _SUB_VARIABLE.sub(
                lambda m: "${" + m.group(2) + "}" if m.group(1) else variables[m.group(2)], text
            )
    return fixed


# ${Name}, or ${!Name}: the text "${Name}" itself.
_SUB_VARIABLE = re.compile(r"\$\{(!?)([^}]*)\}")
