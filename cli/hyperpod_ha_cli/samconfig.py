"""What a samconfig file says about deployed stacks: each environment's stack name, region,
profile and parameters, as SAM CLI reads them (the deploy command's over the global ones)."""

from __future__ import annotations

import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# A configuration file larger than this is not one (read whole, so bounded).
MAX_FILE_BYTES = 1 << 20


@dataclass(frozen=True)
class DeployConfig:
    stack_name: str | None
    region: str | None
    parameters: dict[str, str] = field(default_factory=dict)
    profile: str | None = None


class ConfigFileError(ValueError):
    """The file is not a samconfig file these commands can read."""


def environments(path: Path) -> dict[str, DeployConfig]:
    """Every environment of the file (``default``, ``<cluster>``, ...) with its deploy settings."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ConfigFileError(f"{path} is larger than {MAX_FILE_BYTES} bytes: not a samconfig file")
        config = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigFileError(f"{path} cannot be read as TOML ({type(error).__name__})") from None
    return {name: _deploy(section) for name, section in config.items() if isinstance(section, dict)}


def read_deploy_config(root: Path, environment: str = "default") -> DeployConfig:
    """``environment``'s deploy settings in ``root``'s samconfig.toml (empty when it has none)."""
    path = root / "samconfig.toml"
    return (environments(path) if path.is_file() else {}).get(environment, DeployConfig(None, None))


def _deploy(section: dict[str, Any]) -> DeployConfig:
    def table(command: str) -> dict[str, Any]:
        parameters = section.get(command, {})
        parameters = parameters.get("parameters", {}) if isinstance(parameters, dict) else {}
        return parameters if isinstance(parameters, dict) else {}

    deploy = {**table("global"), **table("deploy")}
    overrides = deploy.get("parameter_overrides", "")
    if isinstance(overrides, list):
        overrides = " ".join(str(item) for item in overrides)
    try:
        items = shlex.split(str(overrides))
    except ValueError:
        raise ConfigFileError("a parameter_overrides value cannot be split (an unclosed quote)") from None
    return DeployConfig(
        stack_name=_text(deploy.get("stack_name")),
        region=_text(deploy.get("region")),
        parameters=dict(item.split("=", 1) for item in items if "=" in item),
        profile=_text(deploy.get("profile")),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
