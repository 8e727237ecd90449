"""What ``samconfig.toml`` says about the deployed stack (name, region, profile, parameters)."""

from __future__ import annotations

import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class DeployConfig:
    stack_name: str
    region: str | None
    parameters: dict[str, str] = field(default_factory=dict)
    profile: str | None = None


def read_deploy_config(root: Path, environment: str = "default", cluster: str | None = None) -> DeployConfig:
    """``environment``'s deploy settings; with ``cluster``, the cluster's own environment
    (``hyperpod-ha configure`` writes ``[<cluster>.deploy.parameters]``) when the file has one."""
    path = root / "samconfig.toml"
    config = tomllib.loads(path.read_text()) if path.is_file() else {}
    if cluster is not None and isinstance(config.get(cluster), dict):
        environment = cluster
    # As SAM CLI reads it: the deploy command's parameters over the global ones.
    section = config.get(environment, {})
    deploy = {
        **section.get("global", {}).get("parameters", {}),
        **section.get("deploy", {}).get("parameters", {}),
    }
    overrides = deploy.get("parameter_overrides", "")
    if isinstance(overrides, list):
        overrides = " ".join(overrides)
    parameters = dict(item.split("=", 1) for item in shlex.split(overrides) if "=" in item)
    return DeployConfig(
        stack_name=deploy.get("stack_name", "hyperpod-ha"),
        region=deploy.get("region") or None,
        parameters=parameters,
        profile=deploy.get("profile") or None,
    )
