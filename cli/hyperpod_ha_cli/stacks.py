"""Which stack, region and profile a command acts on: one rule for every command.

Each of the three is the first one given by

1. the command's flags: ``--stack-name``, ``--region``, ``--profile``;
2. the environment: ``HYPERPOD_HA_STACK_NAME``, ``HYPERPOD_HA_REGION``, ``HYPERPOD_HA_PROFILE``;
3. the cluster's entry in the configuration files: the user's own (``hyperpod-ha configure``
   writes it: ``$HYPERPOD_HA_CONFIG``, else ``$XDG_CONFIG_HOME/hyperpod-ha/samconfig.toml``, else
   ``~/.config/hyperpod-ha/samconfig.toml``) and the checkout's ``samconfig.toml`` when run
   inside one. A file's entry for the cluster is its environment named after the cluster or one
   whose ``ClusterName`` override is the cluster;
4. the defaults: stack ``hyperpod-ha-<cluster>`` (what ``configure`` names it), the SDK's region
   and profile (``AWS_REGION``, ``AWS_PROFILE``, the shared config).

When the files' entries disagree on a value the flags and the environment leave open, that is
an error naming each entry (nothing is guessed). Then the stack found must watch the cluster
asked for: every command refuses another before anything starts (:func:`stack_for_cluster`).
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, ProfileNotFound

from hyperpod_ha_cli.errors import CommandError, UsageError
from hyperpod_ha_cli.options import cluster_name, known_regions, region_name, shown
from hyperpod_ha_cli.samconfig import DeployConfig, environments

# CloudFormation's stack name rule; an AWS profile name as the CLI accepts it.
STACK_NAME = re.compile(r"[A-Za-z][-A-Za-z0-9]{0,127}")
_PROFILE = re.compile(r"[\w+=,.@-]{1,64}")
KEYS = ("stack_name", "region", "profile")
ENVIRONMENT = {
    "stack_name": "HYPERPOD_HA_STACK_NAME",
    "region": "HYPERPOD_HA_REGION",
    "profile": "HYPERPOD_HA_PROFILE",
}
FLAGS = {"stack_name": "--stack-name", "region": "--region", "profile": "--profile"}


def user_config_file(environ: Mapping[str, str] | None = None) -> Path:
    """Where ``configure`` writes and every command reads the user's own configuration."""
    environ = os.environ if environ is None else environ
    if environ.get("HYPERPOD_HA_CONFIG"):
        return Path(environ["HYPERPOD_HA_CONFIG"]).expanduser()
    base = Path(environ["XDG_CONFIG_HOME"]) if environ.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "hyperpod-ha" / "samconfig.toml"


def checkout_config_file(cwd: Path | None = None) -> Path | None:
    """The checkout's samconfig.toml, when run inside a checkout (beside its template.yaml)."""
    start = Path.cwd() if cwd is None else cwd
    for directory in [start, *start.parents]:
        if (directory / "template.yaml").is_file() and (directory / "samconfig.toml").is_file():
            return directory / "samconfig.toml"
    return None


@dataclass(frozen=True)
class Target:
    """The stack a command acts on, and where each of its values came from."""

    cluster: str
    stack_name: str
    region: str | None
    profile: str | None
    sources: dict[str, str] = field(default_factory=dict)

    def where(self) -> str:
        """``stack hyperpod-ha-ml (the default name) in us-east-1 (--region)``."""
        region = self.region or boto3.Session(profile_name=self.profile).region_name or "-"
        return (
            f"stack {self.stack_name} ({self.sources.get('stack_name')}) in {region} "
            f"({self.sources.get('region', 'the SDK default')})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "stack_name": self.stack_name,
            "region": self.region,
            "profile": self.profile,
            "sources": dict(self.sources),
        }


def resolve_target(
    cluster: str,
    flags: Mapping[str, str | None],
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Target:
    """The rule above; :class:`UsageError` for a bad value or entries that disagree."""
    environ = os.environ if environ is None else environ
    values: dict[str, str] = {}
    sources: dict[str, str] = {}
    for key in KEYS:
        if flags.get(key):
            values[key], sources[key] = str(flags[key]), FLAGS[key]
        elif environ.get(ENVIRONMENT[key]):
            values[key], sources[key] = environ[ENVIRONMENT[key]], ENVIRONMENT[key]
    entries = _entries(cluster, environ, cwd)
    for key in KEYS:
        if key in values:
            continue
        found = sorted({(value, where) for where, config in entries if (value := getattr(config, key))})
        if len({value for value, _ in found}) > 1:
            listed = "; ".join(f"{value} in {where}" for value, where in found)
            raise UsageError(
                f"cluster {cluster} has more than one {key.replace('_', ' ')} configured ({listed}): "
                f"give {FLAGS[key]}, or remove the entry that is not meant"
            )
        if found:
            values[key], sources[key] = found[0]
    if "stack_name" not in values:
        values["stack_name"], sources["stack_name"] = f"hyperpod-ha-{cluster}", "the default name"
    target = Target(cluster, values["stack_name"], values.get("region"), values.get("profile"), sources)
    _check(target)
    return target


def _entries(cluster: str, environ: Mapping[str, str], cwd: Path | None) -> list[tuple[str, DeployConfig]]:
    files = [user_config_file(environ), checkout_config_file(cwd)]
    found = []
    for path in dict.fromkeys(file for file in files if file is not None and file.is_file()):
        try:
            configs = environments(path)
        except ValueError as error:
            raise UsageError(str(error)) from None
        for name, config in configs.items():
            if name == cluster or config.parameters.get("ClusterName") == cluster:
                found.append((f"{path} [{name}]", config))
    return found


def _check(target: Target) -> None:
    """Every value from outside, whatever its source, checked as a flag would be."""
    if not STACK_NAME.fullmatch(target.stack_name):
        source = target.sources["stack_name"]
        raise UsageError(f"{shown(target.stack_name)!r} ({source}) is not a CloudFormation stack name")
    if target.region is not None and target.region not in known_regions():
        source = target.sources["region"]
        raise UsageError(f"{shown(target.region)!r} ({source}) is not an AWS region this botocore knows")
    if target.profile is not None and not _PROFILE.fullmatch(target.profile):
        raise UsageError(f"{shown(target.profile)!r} ({target.sources['profile']}) is not a profile name")


def connect(target: Target) -> boto3.Session:
    """The session every later ``boto3.client`` of this process uses (the runtime's included)."""
    try:
        session = boto3.Session(region_name=target.region, profile_name=target.profile)
    except ProfileNotFound as error:
        raise UsageError(f"{error}: give an existing --profile") from None
    if not session.region_name:
        raise UsageError(
            "no AWS region: give --region, set HYPERPOD_HA_REGION or AWS_REGION, "
            f"or run `hyperpod-ha configure --cluster {target.cluster}`"
        )
    if session.region_name not in known_regions():
        raise UsageError(f"{shown(session.region_name)!r} (the SDK's default) is not an AWS region")
    # What the runtime's code reads from the environment, as in Lambda.
    os.environ["AWS_REGION"] = os.environ["AWS_DEFAULT_REGION"] = session.region_name
    if target.profile:
        os.environ["AWS_PROFILE"] = target.profile
    boto3.DEFAULT_SESSION = session
    return session


def deployed_stack(stack_name: str) -> dict[str, str]:
    """The stack's parameters and outputs (outputs win), from CloudFormation."""
    stack = boto3.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"][0]
    parameters = {p["ParameterKey"]: p["ParameterValue"] for p in stack.get("Parameters", [])}
    return {**parameters, **{o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}}


def stack_for_cluster(target: Target) -> dict[str, str]:
    """The target's stack, refused (exit 2) when it is not there or watches another cluster;
    :class:`CommandError` (exit 3) when AWS could not be asked."""
    try:
        outputs = deployed_stack(target.stack_name)
    except ClientError as error:
        if aws_error_code(error) == "ValidationError" and "does not exist" in str(error):
            raise UsageError(
                f"no {target.where()}: give --stack-name or --region, or run "
                f"`hyperpod-ha configure --cluster {target.cluster}`"
            ) from None
        raise CommandError(f"cannot describe stack {target.stack_name}: {aws_error_code(error)}") from None
    except NoCredentialsError:
        raise CommandError("no AWS credentials: `aws sso login`, a --profile, or the environment's") from None
    except BotoCoreError as error:
        raise CommandError(f"cannot describe stack {target.stack_name}: {type(error).__name__}") from None
    watched = outputs.get("ClusterName")
    if watched != target.cluster:
        raise UsageError(f"{target.where()} watches cluster {watched!r}, not {target.cluster!r}")
    return outputs


def aws_error_code(error: ClientError) -> str:
    response: Any = error.response
    return str(response.get("Error", {}).get("Code", "error"))


def add_target_options(parser: Any, cluster_group: Any = None) -> None:
    """``--cluster`` (in ``cluster_group`` when it has an alternative), ``--stack-name``,
    ``--region``, ``--profile`` and ``--json``: what every on-call command takes."""
    (cluster_group or parser).add_argument(
        "--cluster", required=cluster_group is None, type=cluster_name, help="the HyperPod cluster's name"
    )
    parser.add_argument("--stack-name", type=stack_name, help="default: the rule in --help's description")
    parser.add_argument("--region", type=region_name, help="the stack's region")
    parser.add_argument("--profile", type=profile_name, help="an AWS CLI profile")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")


def stack_name(value: str) -> str:
    if not STACK_NAME.fullmatch(value):
        raise argparse.ArgumentTypeError(f"{shown(value)!r} is not a CloudFormation stack name")
    return value


def profile_name(value: str) -> str:
    if not _PROFILE.fullmatch(value):
        raise argparse.ArgumentTypeError(f"{shown(value)!r} is not an AWS profile name")
    return value


def open_stack(args: argparse.Namespace) -> tuple[Target, dict[str, str]]:
    """The command's target by the rule, connected, and its stack checked against the cluster."""
    flags = {key: getattr(args, key, None) for key in KEYS}
    target = resolve_target(args.cluster, flags)
    connect(target)
    return target, stack_for_cluster(target)
