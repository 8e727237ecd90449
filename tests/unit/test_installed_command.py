"""The ``hyperpod-ha`` command installed from a wheel: the on-call commands run with only the
declared dependencies (the development tools cannot even be imported), the development commands
say which extra to install, and with the dev extra ``simulate`` works outside a checkout (what
it reads ships as package data)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
# setuptools builds in the source tree (build/, *.egg-info): it builds from a copy, never leaving
# files in the checkout nor shipping stale ones from an earlier build.
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv*", ".aws-sam", "build", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
)
# What only the dev extra brings: the installed on-call command must run with none of it.
DEV_ONLY = ("moto", "samtranslator", "samcli", "cfnlint", "yaml", "hypothesis", "pytest", "docker")
# The first-party packages the wheel ships beside the on-call command, which it must not need.
DEV_PACKAGES = ("hyperpod_ha_dev", "hyperpod_ha_stack", "hyperpod_lab")
# Runs the installed command with the dev-only modules unimportable (a meta path finder first).
BLOCKED = (
    "import sys\n"
    "BLOCKED = sys.argv[1].split(',')\n"
    "class Blocked:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.split('.')[0] in BLOCKED:\n"
    "            raise ModuleNotFoundError(f'No module named {name!r} (blocked)')\n"
    "        return None\n"
    "sys.meta_path.insert(0, Blocked())\n"
    "del sys.argv[1]\n"
    "from hyperpod_ha_cli.main import main\n"
    "sys.exit(main())\n"
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the checkout, installed into its own directory."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, symlinks=True, ignore=NOT_SOURCE)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", str(source), "-w", str(tmp_path)], check=True
    )
    (wheel,) = tmp_path.glob("hyperpod_ha-*.whl")
    site = tmp_path / "site"
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)], check=True)
    return site


def _run(
    site: Path,
    *words: str,
    blocked: tuple[str, ...] = (),
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCKED, ",".join(blocked) or "-", *words],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(site), **(env or {})},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.mark.cli_process
def test_the_on_call_commands_run_without_the_development_tools(installed: Path, tmp_path: Path) -> None:
    blocked = (*DEV_ONLY, *DEV_PACKAGES)
    version = _run(installed, "--version", blocked=blocked, cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert version.stdout.strip() == f"hyperpod-ha {declared}"
    for words in (["status", "--help"], ["runbook", "start", "--help"], ["configure", "--help"]):
        helped = _run(installed, *words, blocked=blocked, cwd=tmp_path)
        assert helped.returncode == 0, helped.stderr
        assert "--json" in helped.stdout
    # A real command: refused by its bounds, in one line, with the shared usage exit code.
    refused = _run(
        installed, "status", "--cluster", "ml", "--region", "mars-east-1", blocked=blocked, cwd=tmp_path
    )
    assert (refused.returncode, refused.stdout) == (2, "")
    assert "'mars-east-1' is not an AWS region" in refused.stderr
    # Asked of AWS (no account here): one line, the runtime error's code; nothing of moto needed.
    asked = _run(
        installed,
        "status",
        "--cluster",
        "ml",
        "--region",
        "eu-west-2",
        blocked=blocked,
        cwd=tmp_path,
        env={"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_MAX_ATTEMPTS": "1"},
    )
    assert asked.returncode == 3, asked.stderr
    assert asked.stderr.startswith("hyperpod-ha: status: cannot describe stack hyperpod-ha-ml:")
    assert "Traceback" not in asked.stderr


@pytest.mark.cli_process
def test_a_development_command_names_the_extra_to_install(installed: Path, tmp_path: Path) -> None:
    done = _run(installed, "simulate", "failover", blocked=("moto",), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "hyperpod-ha: simulate: simulate is a development command: "
        "pip install 'hyperpod-ha[dev]' (in a checkout: make venv)"
    )


def _imports(directory: Path) -> Iterator[str]:
    for path in directory.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                yield from (alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                yield node.module.split(".")[0]


def test_every_module_the_on_call_command_imports_comes_with_a_declared_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {Requirement(line).name.lower() for line in project["dependencies"]}
    # What each declared distribution brings, its own dependencies included.
    provided: set[str] = set()
    todo = list(declared)
    while todo:
        name = todo.pop()
        requires = [Requirement(r) for r in metadata.requires(name) or []]
        for requirement in requires:
            if requirement.marker is None and requirement.name.lower() not in declared:
                declared.add(requirement.name.lower())
                todo.append(requirement.name.lower())
    by_module = metadata.packages_distributions()
    for module, distributions in by_module.items():
        if any(d.lower().replace("_", "-") in declared for d in distributions):
            provided.add(module)
    stdlib = set(sys.stdlib_module_names)
    first_party = {"hyperpod_ha", "hyperpod_ha_cli", "boto3_stubs", "mypy_boto3_builder"}
    wanted = {
        module
        for directory in (ROOT / "cli" / "hyperpod_ha_cli", ROOT / "layers" / "hyperpod_ha")
        for module in _imports(directory)
        if module not in stdlib and module not in first_party and not module.startswith("mypy_boto3")
    }
    assert wanted - provided == set()
    assert "tomlkit" in wanted
    assert "moto" not in wanted


@pytest.mark.slow
@pytest.mark.cli_process
def test_simulate_failover_from_an_installed_wheel_outside_the_checkout(
    installed: Path, tmp_path: Path
) -> None:
    # The wheel's packages come first on the path: the checkout's (installed editable) are not used.
    run = _run(installed, "simulate", "failover", cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "verdict: FAILED_OVER (expected FAILED_OVER)" in run.stdout
    located = subprocess.run(
        [
            sys.executable,
            "-c",
            "import hyperpod_ha_cli as c, hyperpod_ha_dev as d; print(c.__file__, d.__file__)",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(installed)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert all(path.startswith(str(installed)) for path in located.stdout.split())
