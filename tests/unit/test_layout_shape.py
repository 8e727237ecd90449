"""The one shape of every function: ``functions/<name>/app.py`` the same few lines of wiring, its
feature's entry module ``function.py`` with the function's settings class and its entry class
(``from_settings(settings)`` builds its clients), settings classes in their one place, no module
keeping a name the shape retired, and ``tests/unit`` mirroring the runtime package."""

from __future__ import annotations

import ast
from pathlib import Path

from hyperpod_ha_stack.template import load_template
from tests.unit.test_layout import FUNCTIONS, ROOT, RUNTIME, imported_modules, python_files

# The one form of functions/<name>/app.py; only the docstring and, for a function that counts
# every invocation, Powertools' metrics decorator differ.
HANDLER_FORM = """
from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import {observability}

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.{feature}.function import {entry}


@cache
def _function() -> {entry}:
    from hyperpod_ha.{feature}.function import {entry}, {entry}Settings

    return {entry}.from_settings({entry}Settings.from_environment())


@observed{decorator}
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _function().handle(event, context)
"""
# What a feature's modules are not called any more: the entry module is function.py, the
# domain's modules have domain names, AWS access is named for what it touches.
RETIRED_NAMES = frozenset(
    {"service.py", "adapter.py", "adapters.py", "wiring.py", "function_settings.py", "actions.py"}
)


def template_functions() -> dict[str, str]:
    """Each function's directory under functions/ and its logical id in template.yaml."""
    resources = load_template(ROOT / "template.yaml")["Resources"]
    return {
        str(resource["Properties"]["CodeUri"]).strip("/").removeprefix("functions/"): logical_id
        for logical_id, resource in resources.items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def _without_docstring(tree: ast.Module) -> str:
    body = tree.body[1:] if tree.body and isinstance(tree.body[0], ast.Expr) else tree.body
    return ast.dump(ast.Module(body=body, type_ignores=[]))


def handler_deviations(app: Path, entry: str) -> list[str]:
    """How ``app`` differs from the one form for the function ``entry`` (its logical id)."""
    tree = ast.parse(app.read_text())
    docstring = ast.get_docstring(tree) or ""
    found = []
    if not docstring.startswith(f"{entry}: "):
        found.append(f"{app.parent.name}: the docstring does not start with '{entry}: '")
    features = {
        node.module.split(".")[1]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.endswith(".function")
    }
    if len(features) != 1:
        return [*found, f"{app.parent.name}: imports no one feature's function module"]
    feature = features.pop()
    forms = {
        _without_docstring(ast.parse(HANDLER_FORM.format(feature=feature, entry=entry, **variant)))
        for variant in (
            {"observability": "observed", "decorator": ""},
            {"observability": "metrics, observed", "decorator": "\n@metrics.log_metrics"},
        )
    }
    if _without_docstring(tree) not in forms:
        found.append(f"{app.parent.name}: not the one form of a handler (tests/unit/test_layout_shape.py)")
    return found + entry_deviations(RUNTIME / feature / "function.py", entry)


def entry_deviations(module: Path, entry: str) -> list[str]:
    """What ``module`` lacks of ``entry``: a settings class, and the entry class with
    ``from_settings(settings)`` and ``handle(event, context)``."""
    shown = f"{module.parent.name}/{module.name}"
    if not module.exists():
        return [f"{shown}: missing"]
    classes = {
        node.name: node for node in ast.parse(module.read_text()).body if isinstance(node, ast.ClassDef)
    }
    found = []
    settings = classes.get(f"{entry}Settings")
    if settings is None or "Settings" not in {getattr(base, "id", "") for base in settings.bases}:
        found.append(f"{shown}: no settings class {entry}Settings(Settings)")
    methods = {
        node.name: node
        for node in getattr(classes.get(entry), "body", [])
        if isinstance(node, ast.FunctionDef)
    }
    from_settings, handle = methods.get("from_settings"), methods.get("handle")
    if from_settings is None or [getattr(d, "id", "") for d in from_settings.decorator_list] != [
        "classmethod"
    ]:
        found.append(f"{shown}: {entry} has no classmethod from_settings")
    if handle is None or [a.arg for a in handle.args.args] != ["self", "event", "context"]:
        found.append(f"{shown}: {entry} has no handle(self, event, context)")
    return found


def test_every_function_has_the_one_shape() -> None:
    functions = template_functions()
    assert sorted(functions) == sorted(path.parent.name for path in FUNCTIONS.glob("*/app.py"))
    assert [
        deviation
        for directory, entry in sorted(functions.items())
        for deviation in handler_deviations(FUNCTIONS / directory / "app.py", entry)
    ] == []


def test_the_shape_check_finds_a_handler_that_wires_itself(tmp_path: Path) -> None:
    handler = (FUNCTIONS / "evaluate_verdict" / "app.py").read_text()
    app = tmp_path / "evaluate_verdict" / "app.py"
    app.parent.mkdir()
    app.write_text(handler)
    assert handler_deviations(app, "EvaluateVerdictFunction") == []
    app.write_text(handler.replace("return _function().handle(event, context)", "return {}"))
    assert handler_deviations(app, "EvaluateVerdictFunction") == [
        "evaluate_verdict: not the one form of a handler (tests/unit/test_layout_shape.py)"
    ]
    assert handler_deviations(app, "IncidentFunction")[0].startswith("evaluate_verdict: the docstring")
    module = tmp_path / "function.py"
    module.write_text("class IncidentFunction:\n    def handle(self, event): ...\n")
    assert entry_deviations(module, "IncidentFunction") == [
        f"{tmp_path.name}/function.py: no settings class IncidentFunctionSettings(Settings)",
        f"{tmp_path.name}/function.py: IncidentFunction has no classmethod from_settings",
        f"{tmp_path.name}/function.py: IncidentFunction has no handle(self, event, context)",
    ]


def settings_out_of_place(directory: Path) -> list[str]:
    """Settings classes that break the one rule: a function's (``*FunctionSettings``) sits in its
    feature's ``function.py``, every other (a part) in the feature's ``settings.py``."""
    found = []
    for path in python_files(directory):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ClassDef) or "Settings" not in {
                getattr(b, "id", "") for b in node.bases
            }:
                continue
            home = "function.py" if node.name.endswith("FunctionSettings") else "settings.py"
            if path.name != home:
                found.append(f"{path.relative_to(directory)}: {node.name} belongs in {home}")
    return found


def test_settings_classes_live_by_the_one_rule(tmp_path: Path) -> None:
    assert settings_out_of_place(RUNTIME) == []
    (tmp_path / "function.py").write_text("class ProbeSettings(Settings): ...\n")
    (tmp_path / "models.py").write_text("class WatchdogFunctionSettings(Settings): ...\n")
    assert settings_out_of_place(tmp_path) == [
        "function.py: ProbeSettings belongs in settings.py",
        "models.py: WatchdogFunctionSettings belongs in function.py",
    ]


def test_no_module_keeps_a_retired_name() -> None:
    retired = [
        str(path.relative_to(ROOT))
        for path in python_files(RUNTIME)
        if path.name in RETIRED_NAMES or path.name.endswith("_function.py")
    ]
    assert retired == []


UNIT = ROOT / "tests" / "unit"


def misplaced_unit_tests(unit: Path, runtime: Path) -> list[str]:
    """Where ``unit`` does not mirror the runtime package: a feature without its folder of tests,
    a test of one feature (and no development tool or writer of the stack) outside that folder, a
    module that is neither a test nor in a ``cases/`` folder (case tables and helpers; test
    doubles are tests/fakes)."""
    features = sorted(path.name for path in runtime.iterdir() if (path / "__init__.py").exists())
    found = [f"{feature}/: no tests" for feature in features if not list((unit / feature).glob("test_*.py"))]
    for path in python_files(unit):
        relative = path.relative_to(unit)
        if not path.name.startswith("test_"):
            if path.name not in ("__init__.py", "conftest.py") and "cases" not in relative.parts:
                found.append(f"{relative}: belongs in a cases/ folder (or tests/fakes)")
            continue
        imported = set(imported_modules(path))
        parts = [name.split(".") for name in imported]
        used = {
            part[1] for part in parts if part[0] == "hyperpod_ha" and len(part) > 1 and part[1] in features
        }
        tools = any(
            name.startswith(("hyperpod_ha_dev", "hyperpod_ha_stack", "hyperpod_ha_cli")) for name in imported
        )
        # A test named for a shared top-level module (test_lease.py) stays at the top.
        shared = (runtime / f"{path.stem.removeprefix('test_')}.py").exists()
        if len(relative.parts) == 1 and len(used) == 1 and not tools and not shared:
            found.append(f"{relative}: belongs in {used.pop()}/")
    return found


def test_unit_tests_mirror_the_runtime_package(tmp_path: Path) -> None:
    assert misplaced_unit_tests(UNIT, RUNTIME) == []
    runtime, unit = tmp_path / "hyperpod_ha", tmp_path / "unit"
    for folder in (runtime / "verdict", runtime / "slurm", unit / "slurm"):
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("")
    (unit / "slurm" / "test_ping.py").write_text("from hyperpod_ha.slurm import parse_ping\n")
    (unit / "test_verdict.py").write_text("from hyperpod_ha.verdict.models import HEALTHY\n")
    (runtime / "lease.py").write_text("")
    (unit / "test_lease.py").write_text("import hyperpod_ha.lease\nfrom hyperpod_ha.verdict import x\n")
    (unit / "verdict_probes.py").write_text("")
    assert misplaced_unit_tests(unit, runtime) == [
        "verdict/: no tests",
        "test_verdict.py: belongs in verdict/",
        "verdict_probes.py: belongs in a cases/ folder (or tests/fakes)",
    ]
