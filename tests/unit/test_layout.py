"""The layout's rules: which package may import which, how long a module and a handler may be,
that every function has the one shape (the same handler, its feature's ``function.py`` with its
settings and entry class), and that the Lambda layer is the runtime package exactly."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.package_size import layer_differences
from hyperpod_ha_dev.embedded.cfn import load_template

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "layers" / "hyperpod_ha"
DEV = ROOT / "dev" / "hyperpod_ha_dev"
LAB = ROOT / "lab" / "hyperpod_lab"
FUNCTIONS = ROOT / "functions"
# What the lab may use of the runtime package: the command transports' interface and the logger.
LAB_PUBLIC_INTERFACE = frozenset({"hyperpod_ha.commands", "hyperpod_ha.observability"})
FIRST_PARTY = ("hyperpod_ha", "hyperpod_ha_dev", "hyperpod_lab", "tests", "bench")
# Who may import whom; a package not listed imports none of the first-party packages above.
ALLOWED = {
    "runtime": {"hyperpod_ha"},
    "functions": {"hyperpod_ha"},
    "lab": {"hyperpod_lab", "hyperpod_ha"},
    "dev": {"hyperpod_ha_dev", "hyperpod_ha", "hyperpod_lab"},
}
MODULE_LINES = 400
HANDLER_LINES = 45


def python_files(directory: Path) -> Iterator[Path]:
    yield from (path for path in sorted(directory.rglob("*.py")) if "__pycache__" not in path.parts)


def imported_modules(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def forbidden_imports(package: str, directory: Path) -> list[str]:
    found = []
    for path in python_files(directory):
        for module in imported_modules(path):
            top = module.split(".")[0]
            allowed = top not in FIRST_PARTY or top in ALLOWED[package]
            if package == "lab" and top == "hyperpod_ha":
                allowed = _public(module)
            if not allowed:
                found.append(f"{path.relative_to(directory)}: {module}")
    return found


def _public(module: str) -> bool:
    return any(module == name or module.startswith(f"{name}.") for name in LAB_PUBLIC_INTERFACE) or (
        module == "hyperpod_ha"
    )


@pytest.mark.parametrize(
    ("package", "directory"),
    [("runtime", RUNTIME), ("functions", FUNCTIONS), ("lab", LAB), ("dev", DEV)],
)
def test_each_package_imports_only_in_its_direction(package: str, directory: Path) -> None:
    assert forbidden_imports(package, directory) == []


def test_the_direction_check_finds_an_import_against_it(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(
        "from hyperpod_ha_dev.embedded import stack\nimport hyperpod_ha.verdict\n"
    )
    assert [line.split(": ")[1] for line in forbidden_imports("runtime", tmp_path)] == [
        "hyperpod_ha_dev.embedded",
        "hyperpod_ha_dev.embedded.stack",
    ]
    (tmp_path / "bad.py").write_text("from hyperpod_ha.verdict import decide\n")
    assert forbidden_imports("lab", tmp_path) != []


def test_no_module_is_longer_than_the_limit() -> None:
    long = [
        f"{path.relative_to(ROOT)}: {lines}"
        for directory in ("layers", "dev", "lab", "functions", "tests", "bench")
        for path in python_files(ROOT / directory)
        if (lines := len(path.read_text().splitlines())) > MODULE_LINES
    ]
    assert long == []


def test_handlers_are_wiring() -> None:
    long = [
        f"{path.relative_to(ROOT)}: {lines}"
        for path in sorted(FUNCTIONS.glob("*/app.py"))
        if (lines := len(path.read_text().splitlines())) > HANDLER_LINES
    ]
    assert long == []


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
        found.append(f"{app.parent.name}: not the one form of a handler (tests/unit/test_layout.py)")
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
        "evaluate_verdict: not the one form of a handler (tests/unit/test_layout.py)"
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


@pytest.fixture(scope="module")
def built_layer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The layer's own build (x86_64 wheels: whichever, the package part is the same)."""
    artifacts = tmp_path_factory.mktemp("layer")
    subprocess.run(
        ["make", "-C", str(ROOT / "layers"), "build-HyperpodHaLayer", f"ARTIFACTS_DIR={artifacts}"],
        check=True,
        capture_output=True,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LAYER_ARCHITECTURE": "x86_64", "HOME": str(artifacts)},
    )
    return artifacts / "python"


def test_the_built_layer_is_the_runtime_package(built_layer: Path, tmp_path: Path) -> None:
    assert layer_differences(built_layer / "hyperpod_ha") == []
    copy = tmp_path / "hyperpod_ha"
    shutil.copytree(built_layer / "hyperpod_ha", copy)
    (copy / "extra.py").write_text("")
    assert layer_differences(copy) == ["+extra.py"]


def _runtime_modules() -> list[str]:
    modules = [
        ".".join(path.relative_to(RUNTIME.parent).with_suffix("").parts).removesuffix(".__init__")
        for path in python_files(RUNTIME)
    ]
    named = {
        module
        for path in [*python_files(RUNTIME), *python_files(FUNCTIONS)]
        for module in imported_modules(path)
        if module.startswith("aws_lambda_powertools")
    }
    return sorted(set(modules) | named)


def test_what_the_layer_leaves_out_is_imported_by_nothing_shipped(built_layer: Path) -> None:
    # Every runtime module and every Powertools name they import (the handlers' deferred
    # imports included), from the built layer first on the path: a pruned part would fail here.
    code = (
        "import importlib, sys\n"
        "failed = []\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError:\n"
        "        parent, _, attribute = name.rpartition('.')\n"
        "        try:\n"
        "            getattr(importlib.import_module(parent), attribute)\n"
        "        except (ImportError, AttributeError) as error:\n"
        "            failed.append(f'{name}: {error}')\n"
        "import aws_lambda_powertools\n"
        "print(aws_lambda_powertools.__file__)\n"
        "print(failed)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *_runtime_modules()],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(built_layer), "PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "us-east-1"},
    )
    location, failed = done.stdout.splitlines()
    assert location.startswith(str(built_layer))
    assert failed == "[]"
    assert not (built_layer / "aws_lambda_powertools" / "event_handler").exists()
