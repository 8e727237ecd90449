"""template.yaml's deploy parameters, and the check every found or typed value passes first.

The installed command has no template.yaml to read: ``make generate`` writes its Parameters
section beside this module (``template_parameters.json``; a test keeps it current).

The check is CloudFormation's own (Type, AllowedPattern, AllowedValues, Min/MaxValue,
Min/MaxLength) plus what a samconfig ``parameter_overrides`` item can hold unquoted."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from hyperpod_ha.errors import InputRejected

# A value longer than CloudFormation's own limit for a parameter value is not one.
MAX_VALUE_CHARS = 4096
# The AWS-specific types the template uses; CloudFormation checks them against the account,
# configure checks their form (the ids' documented shapes).
_ID_PATTERNS = {
    "AWS::EC2::Subnet::Id": r"subnet-[0-9a-f]{8}(?:[0-9a-f]{9})?",
    "AWS::EC2::SecurityGroup::Id": r"sg-[0-9a-f]{8}(?:[0-9a-f]{9})?",
    "AWS::EC2::VPC::Id": r"vpc-[0-9a-f]{8}(?:[0-9a-f]{9})?",
}
# Whitespace or quotes would need quoting in parameter_overrides, which no value here needs.
_UNQUOTABLE = re.compile(r"[\s\"'\\]")


@dataclass(frozen=True)
class ParameterSpec:
    """One entry of the template's ``Parameters``."""

    name: str
    type: str
    description: str
    default: str | None
    allowed_pattern: str | None
    allowed_values: tuple[str, ...]
    min_value: Decimal | None
    max_value: Decimal | None
    min_length: int | None
    max_length: int | None
    # CloudFormation's own words for a value the pattern refuses (the pattern itself otherwise).
    constraint_description: str | None = None

    @property
    def required(self) -> bool:
        """Without a default, ``sam deploy`` cannot run until a value is given."""
        return self.default is None


PARAMETERS_FILE = Path(__file__).with_name("template_parameters.json")


def template_parameters(path: Path = PARAMETERS_FILE) -> dict[str, ParameterSpec]:
    """The template's parameters by name, in the template's order."""
    return parameter_specs(json.loads(path.read_text()))


def parameter_specs(parameters: Mapping[str, Mapping[str, Any]]) -> dict[str, ParameterSpec]:
    """A template's ``Parameters`` section, read."""
    return {name: _spec(name, entry) for name, entry in parameters.items()}


def _spec(name: str, entry: Mapping[str, Any]) -> ParameterSpec:
    def number(key: str) -> Decimal | None:
        return Decimal(str(entry[key])) if key in entry else None

    def length(key: str) -> int | None:
        return int(entry[key]) if key in entry else None

    return ParameterSpec(
        name=name,
        type=str(entry.get("Type", "String")),
        description=" ".join(str(entry.get("Description", "")).split()),
        default=str(entry["Default"]) if "Default" in entry else None,
        allowed_pattern=entry.get("AllowedPattern"),
        allowed_values=tuple(str(value) for value in entry.get("AllowedValues", ())),
        min_value=number("MinValue"),
        max_value=number("MaxValue"),
        min_length=length("MinLength"),
        max_length=length("MaxLength"),
        constraint_description=entry.get("ConstraintDescription"),
    )


def validate(spec: ParameterSpec, value: str) -> str:
    """The value as samconfig will hold it (list items comma-joined, no spaces), or
    :class:`InputRejected` saying which rule it breaks."""
    if len(value) > MAX_VALUE_CHARS:
        raise InputRejected(f"{spec.name}: longer than {MAX_VALUE_CHARS} characters")
    if spec.min_length is not None and len(value) < spec.min_length:
        raise InputRejected(f"{spec.name}: shorter than {spec.min_length} characters")
    if spec.max_length is not None and len(value) > spec.max_length:
        raise InputRejected(f"{spec.name}: longer than {spec.max_length} characters")
    if spec.type.startswith("List<") or spec.type == "CommaDelimitedList":
        item_type = spec.type[5:-1] if spec.type.startswith("List<") else "String"
        items = [item.strip() for item in value.split(",")]
        if not all(items):
            raise InputRejected(f"{spec.name}: an empty item in the comma-separated list")
        for item in items:
            _validate_scalar(spec, item_type, item)
        return ",".join(items)
    _validate_scalar(spec, spec.type, value)
    return value


def _validate_scalar(spec: ParameterSpec, item_type: str, value: str) -> None:
    if _UNQUOTABLE.search(value):
        raise InputRejected(f"{spec.name}: no spaces, quotes or backslashes allowed")
    if item_type == "Number":
        try:
            number = Decimal(value)
        except InvalidOperation:
            raise InputRejected(f"{spec.name}: {value!r} is not a number") from None
        if not number.is_finite():
            raise InputRejected(f"{spec.name}: {value!r} is not a number")
        if spec.min_value is not None and number < spec.min_value:
            raise InputRejected(f"{spec.name}: {value} is below the minimum {spec.min_value}")
        if spec.max_value is not None and number > spec.max_value:
            raise InputRejected(f"{spec.name}: {value} is above the maximum {spec.max_value}")
        if spec.allowed_values and number not in {Decimal(allowed) for allowed in spec.allowed_values}:
            raise InputRejected(f"{spec.name}: {value} is not one of {', '.join(spec.allowed_values)}")
        return
    if item_type in _ID_PATTERNS:
        if not re.fullmatch(_ID_PATTERNS[item_type], value):
            raise InputRejected(f"{spec.name}: {value!r} is not an {item_type}")
    elif item_type != "String":
        raise InputRejected(f"{spec.name}: configure cannot check values of type {item_type}")
    if spec.allowed_values and value not in spec.allowed_values:
        raise InputRejected(f"{spec.name}: {value!r} is not one of {', '.join(spec.allowed_values)}")
    if spec.allowed_pattern is not None and not re.fullmatch(spec.allowed_pattern, value):
        rule = spec.constraint_description or f"does not match {spec.allowed_pattern}"
        raise InputRejected(f"{spec.name}: {value!r} {rule}")
