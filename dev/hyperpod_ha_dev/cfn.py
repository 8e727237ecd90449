"""Resolving a template's values outside moto: against a deployed stack (``hyperpod-ha invoke
--stack-name``), with placeholders (``bench``), or to check what the embedded stack created. The
template is read with ``hyperpod_ha_stack.template``.

Only what this project's template uses is resolved: Ref, Fn::GetAtt, Fn::Sub, Fn::If, Fn::Join,
Fn::Select, Fn::Split, Fn::FindInMap, Fn::Base64, conditions and pseudo parameters; others stay
unresolved.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hyperpod_ha_stack.template import TemplateError, find_in_map

NO_VALUE = object()


@dataclass(frozen=True)
class Context:
    """What intrinsic functions resolve against."""

    parameters: Mapping[str, Any]
    pseudo: Mapping[str, str]
    ref: Callable[[str], Any]  # logical id -> Ref value
    get_att: Callable[[str, str], Any]  # logical id, attribute -> value
    conditions: Mapping[str, bool]


class Resolver:
    def __init__(self, template: Mapping[str, Any], context: Context) -> None:
        self._template = template
        self._context = context

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            items = [self.resolve(item) for item in value]
            return [item for item in items if item is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, argument),) = value.items()
            handler = self._intrinsics().get(key)
            if handler is not None:
                return handler(argument)
        resolved = {key: self.resolve(item) for key, item in value.items()}
        return {key: item for key, item in resolved.items() if item is not NO_VALUE}

    def _intrinsics(self) -> dict[str, Callable[[Any], Any]]:
        return {
            "Ref": self._ref,
            "Fn::GetAtt": self._get_att,
            "Fn::Sub": self._sub,
            "Fn::If": self._if,
            "Fn::Join": lambda arg: str(arg[0]).join(str(v) for v in self.resolve(arg[1])),
            "Fn::Select": lambda arg: self.resolve(arg[1])[int(self.resolve(arg[0]))],
            "Fn::Split": lambda arg: str(self.resolve(arg[1])).split(arg[0]),
            "Fn::FindInMap": lambda arg: find_in_map(self._template, [self.resolve(key) for key in arg]),
            "Fn::Base64": lambda arg: base64.b64encode(str(self.resolve(arg)).encode()).decode("ascii"),
        }

    def _ref(self, name: str) -> Any:
        if name == "AWS::NoValue":
            return NO_VALUE
        if name in self._context.pseudo:
            return self._context.pseudo[name]
        if name in self._context.parameters:
            return self._context.parameters[name]
        return self._context.ref(name)

    def _get_att(self, argument: Any) -> Any:
        logical_id, attribute = argument if isinstance(argument, list) else str(argument).split(".", 1)
        return self._context.get_att(logical_id, attribute)

    def _sub(self, argument: Any) -> str:
        text, variables = (argument, {}) if isinstance(argument, str) else (argument[0], argument[1])
        local = {key: self.resolve(value) for key, value in variables.items()}

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"
            if name in local:
                return str(local[name])
            if "." in name:
                logical_id, attribute = name.split(".", 1)
                return str(self._context.get_att(logical_id, attribute))
            return str(self._ref(name))

        return re.sub(r"\$\{([^}]+)\}", replace, text)

    def _if(self, argument: list[Any]) -> Any:
        condition, when_true, when_false = argument
        return self.resolve(when_true if self._context.conditions[condition] else when_false)


def evaluate_conditions(template: Mapping[str, Any], parameters: Mapping[str, Any]) -> dict[str, bool]:
    """Every condition of ``template`` (and a rule's assertion, put there as one) on ``parameters``."""
    definitions: Mapping[str, Any] = template.get("Conditions", {})
    results: dict[str, bool] = {}

    def value(node: Any) -> Any:
        if not (isinstance(node, dict) and len(node) == 1):
            return node
        ((key, argument),) = node.items()
        if key not in operators:
            raise TemplateError(f"condition function {key} is not supported")
        return operators[key](argument)

    def condition(name: str) -> bool:
        if name not in results:
            results[name] = bool(value(definitions[name]))
        return results[name]

    def items(node: Any) -> list[str]:
        """A list parameter's items: given as a list, or as CloudFormation's comma-separated text
        (its default), where "" is the one empty item."""
        resolved = value(node)
        return [str(item) for item in resolved] if isinstance(resolved, list) else str(resolved).split(",")

    operators: dict[str, Any] = {
        "Fn::Equals": lambda args: str(value(args[0])) == str(value(args[1])),
        # Conditions join a list to test it for none given; rules ask whether it holds an item.
        "Fn::Join": lambda args: str(args[0]).join(items(args[1])),
        "Fn::Contains": lambda args: str(value(args[1])) in items(args[0]),
        "Fn::Not": lambda args: not value(args[0]),
        "Fn::And": lambda args: all(value(item) for item in args),
        "Fn::Or": lambda args: any(value(item) for item in args),
        "Ref": lambda name: parameters[name],
        "Condition": condition,
    }

    for name in definitions:
        condition(name)
    return results
