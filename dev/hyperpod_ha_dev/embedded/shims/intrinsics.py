"""Three intrinsic functions as CloudFormation evaluates them, where moto 5.2.5 differs:

- ``Fn::Equals`` (Conditions): moto compares the two values as Python values, and makes a
  Number parameter a number, so ``!Equals [!Ref Days, "0"]`` was false for Days 0 (``0`` written
  unquoted held only because Python's 0 equals False). CloudFormation compares them as text.
- ``AWS::NoValue`` in a list (``!If [Cond, item, !Ref AWS::NoValue]``): moto left a null item
  (each role's policy had null statements); CloudFormation removes the item.
- ``Fn::FindInMap`` with a key from a Number parameter (``!FindInMap [Map, !Ref Minutes, Key]``):
  moto looked the number up in the mapping's text keys (a KeyError); CloudFormation's ``Ref``
  gives a parameter as text.
"""

from __future__ import annotations

from typing import Any

from hyperpod_ha_dev.embedded.function_spec import parameter_text
from hyperpod_ha_dev.embedded.patching import Patch


def equals_as_text() -> Patch:
    from moto.cloudformation import parsing

    moto_parse = parsing.parse_condition

    def parse_condition(condition: Any, resources_map: Any, condition_map: Any) -> bool:
        if isinstance(condition, dict) and list(condition) == ["Fn::Equals"]:
            left, right = (parsing.clean_json(value, resources_map) for value in condition["Fn::Equals"])
            return parameter_text(left) == parameter_text(right)
        return bool(moto_parse(condition, resources_map, condition_map))

    return (parsing, "parse_condition", parse_condition)


def clean_json_as_cloudformation() -> Patch:
    """``AWS::NoValue`` in a list and ``Fn::FindInMap``'s keys (one patch: both are moto's
    ``clean_json``, which calls it again for every nested value)."""
    from moto.cloudformation import parsing

    moto_clean = parsing.clean_json

    def clean_json(resource_json: Any, resources_map: Any) -> Any:
        if isinstance(resource_json, dict) and list(resource_json) == ["Fn::FindInMap"]:
            name, *keys = (clean_json(part, resources_map) for part in resource_json["Fn::FindInMap"])
            found = resources_map[name]
            for key in keys:
                found = found[parameter_text(key)]
            return found
        cleaned = moto_clean(resource_json, resources_map)  # which calls this for each item
        if isinstance(resource_json, list):
            return [item for item in cleaned if item is not None]
        return cleaned

    return (parsing, "clean_json", clean_json)
