"""The embedded stack's modules import one another without a circle, deferred imports inside
functions included (seven of them were once tied together by ``ACCOUNT``/``REGION``)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "hyperpod_ha_dev.embedded"
DIRECTORY = ROOT / "dev" / "hyperpod_ha_dev" / "embedded"


def module_name(path: Path) -> str:
    parts = path.relative_to(DIRECTORY).with_suffix("").parts
    return ".".join((PACKAGE, *parts)).removesuffix(".__init__")


def imports(path: Path, known: set[str]) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        found |= {name for name in names if name in known}
    return found


def graph(directory: Path) -> dict[str, set[str]]:
    paths = [path for path in directory.rglob("*.py") if "__pycache__" not in path.parts]
    known = {module_name(path) for path in paths}
    return {module_name(path): imports(path, known) - {module_name(path)} for path in paths}


def circle(edges: dict[str, set[str]]) -> list[str]:
    """One circle of imports, or [] (depth-first, colouring the modules on the current path)."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = "open"
        path.append(module)
        for other in sorted(edges.get(module, ())):
            if state.get(other) == "open":
                return [*path[path.index(other) :], other]
            if other not in state and (found := visit(other)):
                return found
        state[module] = "done"
        path.pop()
        return []

    for module in sorted(edges):
        if module not in state and (found := visit(module)):
            return found
    return []


def test_no_module_of_the_embedded_stack_imports_itself_back() -> None:
    edges = graph(DIRECTORY)
    assert f"{PACKAGE}.stack" in edges
    assert f"{PACKAGE}.shims" in edges
    assert circle(edges) == []


def test_the_circle_check_finds_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circle(edges) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": set()}) == []
