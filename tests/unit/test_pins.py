"""Tested is shipped: the environment runs exactly the packages the layer pins, and the tools
whose internals the development code leans on are bounded to the versions the suite passed on."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from tests.conftest import ROOT

LAYER_REQUIREMENTS = ROOT / "layers" / "requirements.txt"


def layer_pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for raw in LAYER_REQUIREMENTS.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        # A constraints file may hold neither extras nor ranges: one exact version per package.
        assert not requirement.extras, f"{line}: a constraints file cannot carry extras"
        [specifier] = list(requirement.specifier)
        assert specifier.operator == "==", f"{line}: the layer pins exact versions"
        pins[requirement.name] = specifier.version
    return pins


def test_the_layer_pins_what_the_runtime_package_needs() -> None:
    assert set(layer_pins()) == {"aws-lambda-powertools", "cryptography", "PyMySQL", "websockets"}


@pytest.mark.parametrize("package", sorted(layer_pins()))
def test_the_environment_runs_the_layers_version(package: str) -> None:
    assert metadata.version(package) == layer_pins()[package]


def test_the_venv_uses_the_layer_pins_as_constraints() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r'pip install [^\n]*-e "\.\[dev\]" --constraint layers/requirements\.txt', makefile)


def _dev_requirement(name: str) -> Requirement:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found = [Requirement(text) for text in project["optional-dependencies"]["dev"]]
    return next(requirement for requirement in found if requirement.name == name)


@pytest.mark.parametrize("package", ["moto", "aws-sam-cli"])
def test_moto_and_sam_are_bounded_to_a_minor_version(package: str) -> None:
    requirement = _dev_requirement(package)
    installed = Version(metadata.version(package))
    assert installed in requirement.specifier
    upper = [spec for spec in requirement.specifier if spec.operator == "<"]
    assert upper, f"{package} has no upper bound"
    bound = Version(upper[0].version)
    assert (bound.major, bound.minor) == (installed.major, installed.minor + 1)


def test_the_embedded_stack_uses_no_sam_cli_internals() -> None:
    dev = ROOT / "dev" / "hyperpod_ha_dev"
    users = [path for path in dev.rglob("*.py") if re.search(r"\bsamcli\b", path.read_text())]
    assert users == []
