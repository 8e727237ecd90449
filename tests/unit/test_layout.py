"""The layout's rules: which package may import which, that no modules import each other in a
circle, how long a module and a handler may be, and that the Lambda layer is the runtime package
exactly. The one shape of every function is checked in ``test_layout_shape.py``."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from bench.package_size import layer_differences

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "layers" / "hyperpod_ha"
STACK = ROOT / "stack" / "hyperpod_ha_stack"
CLI = ROOT / "cli" / "hyperpod_ha_cli"
DEV = ROOT / "dev" / "hyperpod_ha_dev"
LAB = ROOT / "lab" / "hyperpod_lab"
FUNCTIONS = ROOT / "functions"
# What the lab may use of the runtime package: the command transports' interface and the logger.
LAB_PUBLIC_INTERFACE = frozenset({"hyperpod_ha.commands", "hyperpod_ha.observability"})
FIRST_PARTY = (
    "hyperpod_ha",
    "hyperpod_ha_cli",
    "hyperpod_ha_stack",
    "hyperpod_ha_dev",
    "hyperpod_lab",
    "tests",
    "bench",
)
# Who may import whom; a package not listed imports none of the first-party packages above.
ALLOWED = {
    "runtime": {"hyperpod_ha"},
    "functions": {"hyperpod_ha"},
    "lab": {"hyperpod_lab", "hyperpod_ha"},
    # The writers of what is deployed: nothing that ships or runs the lab imports them.
    "stack": {"hyperpod_ha_stack", "hyperpod_ha"},
    # The on-call command installs without the development tools: it finds them by name.
    "cli": {"hyperpod_ha_cli", "hyperpod_ha"},
    "dev": {"hyperpod_ha_dev", "hyperpod_ha_cli", "hyperpod_ha_stack", "hyperpod_ha", "hyperpod_lab"},
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
    [
        ("runtime", RUNTIME),
        ("functions", FUNCTIONS),
        ("lab", LAB),
        ("stack", STACK),
        ("cli", CLI),
        ("dev", DEV),
    ],
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
    # The writers of the stack may read the runtime package, never the development tools.
    (tmp_path / "bad.py").write_text(
        "from hyperpod_ha_dev.cfn import Resolver\nfrom hyperpod_ha import lease\n"
    )
    assert [line.split(": ")[1] for line in forbidden_imports("stack", tmp_path)] == [
        "hyperpod_ha_dev.cfn",
        "hyperpod_ha_dev.cfn.Resolver",
    ]
    (tmp_path / "bad.py").write_text("from hyperpod_ha_stack.alarms import alarms\n")
    assert forbidden_imports("runtime", tmp_path) != []
    assert forbidden_imports("functions", tmp_path) != []


def _module_name(path: Path, root: Path, top: str) -> str:
    return ".".join((top, *path.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")


def module_circles(packages: Mapping[str, Path]) -> list[list[str]]:
    """Modules that import each other, directly or round a circle, at any depth (an import in a
    function too). A package's ``__init__`` is left out: it may gather its own modules."""
    modules = {
        _module_name(path, root, top): path
        for top, root in packages.items()
        for path in python_files(root)
        if path.name != "__init__.py"
    }
    graph = {
        name: sorted({found for found in imported_modules(path) if found in modules and found != name})
        for name, path in modules.items()
    }
    return [sorted(circle) for circle in _strongly_connected(graph) if len(circle) > 1]


def _strongly_connected(graph: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Tarjan's components, iteratively (a deep package must not hit the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, edge = work.pop()
            if edge == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
            if edge < len(graph[node]):
                work.append((node, edge + 1))
                nxt = graph[node][edge]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                circle = []
                while True:
                    member = stack.pop()
                    circle.append(member)
                    if member == node:
                        break
                found.append(circle)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_no_modules_import_each_other_in_a_circle(tmp_path: Path) -> None:
    assert module_circles({"hyperpod_ha": RUNTIME}) == []
    assert module_circles({"hyperpod_ha_dev": DEV}) == []  # the embedded stack's too, since issue 23
    assert module_circles({"hyperpod_ha_stack": STACK}) == []
    assert module_circles({"hyperpod_ha_cli": CLI}) == []
    (tmp_path / "status.py").write_text("from pkg.drill import stack_for_cluster\n")
    (tmp_path / "drill.py").write_text("def start():\n    from pkg.status import cluster_status\n")
    (tmp_path / "text.py").write_text("from pkg.status import render\n")
    assert module_circles({"pkg": tmp_path}) == [["pkg.drill", "pkg.status"]]


def part_imports(directory: Path) -> dict[str, set[str]]:
    """Which part of the runtime package (a feature package, or a module at its top) imports
    which other part, wherever the import stands (in a function, under TYPE_CHECKING)."""
    graph: dict[str, set[str]] = {}
    for path in python_files(directory):
        part = path.relative_to(directory).parts[0].removesuffix(".py")
        for module in imported_modules(path):
            names = module.split(".")
            if names[0] == "hyperpod_ha" and len(names) > 1 and names[1] != part:
                graph.setdefault(part, set()).add(names[1])
    return graph


def part_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of parts that import each other, directly or through other parts."""

    def reached(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for part in graph.get(todo.pop(), set()) - seen:
                seen.add(part)
                todo.append(part)
        return seen

    reach = {part: reached(part) for part in graph}
    circles = {
        frozenset(other for other in reach[part] if part in reach.get(other, set()))
        for part in graph
        if part in reach[part]
    }
    return sorted(sorted(circle) for circle in circles)


def test_no_two_parts_of_the_runtime_package_import_each_other() -> None:
    # A shared value (the lease, the settings it needs) sits at the top, not in one feature.
    assert part_circles(part_imports(RUNTIME)) == []


def test_the_circle_check_finds_features_importing_each_other(tmp_path: Path) -> None:
    files = {
        "runs/cleanup.py": "from hyperpod_ha.drill.adapters import lease_id_for_drill\n",
        "drill/settings.py": "def lazy() -> None:\n    from hyperpod_ha.runs import models\n",
        "lease.py": "from hyperpod_ha import errors\n",
        "ingestion/a.py": "import hyperpod_ha.watchdog.b\nfrom hyperpod_ha import lease\n",
        "watchdog/b.py": "from hyperpod_ha.snapshots.c import C\n",
        "snapshots/c.py": "from hyperpod_ha import ingestion\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    assert part_circles(part_imports(tmp_path)) == [
        ["drill", "runs"],
        ["ingestion", "snapshots", "watchdog"],
    ]
    (tmp_path / "drill" / "settings.py").write_text("from hyperpod_ha.lease import LeaseSeconds\n")
    assert part_circles(part_imports(tmp_path)) == [["ingestion", "snapshots", "watchdog"]]


def test_no_module_is_longer_than_the_limit() -> None:
    long = [
        f"{path.relative_to(ROOT)}: {lines}"
        for directory in ("layers", "cli", "stack", "dev", "lab", "functions", "tests", "bench")
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
