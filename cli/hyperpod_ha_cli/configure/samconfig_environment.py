"""A cluster's environment in a samconfig file (``sam deploy --config-env <cluster>``),
written with tomlkit so the file's other environments and comments stay as they were."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import tomlkit
from tomlkit.exceptions import TOMLKitError

from hyperpod_ha.errors import InputRejected

# What the repository's default environment deploys with (the template creates IAM roles).
DEPLOY_SETTINGS: dict[str, str | bool] = {
    "capabilities": "CAPABILITY_IAM",
    "confirm_changeset": True,
    "resolve_s3": True,
}


@dataclass(frozen=True)
class DeployEnvironment:
    name: str
    stack_name: str
    region: str
    parameters: Mapping[str, str]  # template parameter -> value, in the template's order
    profile: str | None = None


class EnvironmentExists(InputRejected):
    """The environment is already in the file and ``--force`` was not given."""


def existing_environments(path: Path) -> set[str]:
    return set(_read(path)) if path.is_file() else set()


def write_environment(path: Path, environment: DeployEnvironment, *, force: bool) -> None:
    """Add (or, with ``force``, replace) ``[<name>.deploy.parameters]``; nothing else changes."""
    document = _read(path) if path.is_file() else tomlkit.document()
    if "version" not in document:
        document["version"] = 0.1
    if environment.name in document:
        if not force:
            raise EnvironmentExists(
                f"{path} already has environment {environment.name!r} (--force replaces it)"
            )
        del document[environment.name]
    parameters = tomlkit.table()
    written = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    # Inside the table, so that replacing the environment replaces its comment too.
    parameters.add(tomlkit.comment(f"written by hyperpod-ha configure, {written}"))
    parameters["stack_name"] = environment.stack_name
    parameters["region"] = environment.region
    if environment.profile:
        parameters["profile"] = environment.profile
    for key, value in DEPLOY_SETTINGS.items():
        parameters[key] = value
    overrides = tomlkit.array()
    overrides.multiline(True)
    overrides.extend(f"{key}={value}" for key, value in environment.parameters.items())
    parameters["parameter_overrides"] = overrides
    deploy = tomlkit.table(is_super_table=True)
    deploy["parameters"] = parameters
    section = tomlkit.table(is_super_table=True)
    section["deploy"] = deploy
    document.add(tomlkit.nl())
    document[environment.name] = section
    path.write_text(tomlkit.dumps(document))


def _read(path: Path) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(path.read_text())
    except (TOMLKitError, UnicodeDecodeError) as error:
        raise InputRejected(f"{path} is not TOML ({error})") from None
