"""One error root: every error the runtime package defines derives from HyperpodHaError, and
every error name the state machines match on is one of them."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from pathlib import Path

import hyperpod_ha
from hyperpod_ha.errors import HyperpodHaError

ROOT = Path(__file__).resolve().parents[2]
# Runs on the controller node with the standard library only: it cannot import the package.
NODE_SCRIPTS = frozenset({"hyperpod_ha.rotation.slurmdbd_credentials"})


def runtime_errors() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for module_info in pkgutil.walk_packages(hyperpod_ha.__path__, "hyperpod_ha."):
        if module_info.name in NODE_SCRIPTS:
            continue
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                found[f"{module.__name__}.{name}"] = value
    return found


def matched_error_names() -> set[str]:
    names: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            names.update(name for name in node.get("ErrorEquals", []) if not name.startswith("States."))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for definition in (ROOT / "statemachine").glob("*.asl.json"):
        walk(json.loads(definition.read_text()))
    return names


def test_every_runtime_error_derives_from_the_root() -> None:
    errors = runtime_errors()
    assert len(errors) > 30
    assert sorted(name for name, error in errors.items() if not issubclass(error, HyperpodHaError)) == []


def test_every_error_the_state_machines_match_on_is_a_runtime_error() -> None:
    defined = {error.__name__ for error in runtime_errors().values()}
    matched = matched_error_names()
    assert matched
    # Dotted names are AWS's own (Lambda.ServiceException, DynamoDB.ConditionalCheckFailedException).
    assert sorted(name for name in matched - defined if "." not in name) == []
