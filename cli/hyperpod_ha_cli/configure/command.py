"""``hyperpod-ha configure --cluster NAME``: the cluster's deploy settings, in the user's own
configuration (``~/.config/hyperpod-ha/samconfig.toml``: :mod:`hyperpod_ha_cli.stacks`), never
in the checkout's tracked samconfig.toml.

Finds every deploy parameter it can (``DescribeCluster``, with the instance groups' Slurm
configuration where HyperPod's API configures Slurm, the cluster's
``provisioning_parameters.json`` where it still exists, the FSx file system either names, the
multi-head sample stack's outputs), checks each against template.yaml, asks on stdin only for
required values it could not find (``--no-input``: names them and exits 2, writing nothing) and
for who is told (``NotificationEmail``: empty, it warns that nobody is), and writes
``[<cluster>.deploy.parameters]`` for ``sam deploy --config-file <file> --config-env <cluster>``;
every other command finds the cluster's stack and region there. Exit 0 written, 2 for bad
arguments or values still missing, 3 when AWS could not be asked."""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from botocore.exceptions import BotoCoreError, ClientError

from hyperpod_ha.errors import InputRejected
from hyperpod_ha_cli.configure import discovery
from hyperpod_ha_cli.configure.findings import Resolved, Unresolved, resolve, shown
from hyperpod_ha_cli.configure.parameters import ParameterSpec, template_parameters, validate
from hyperpod_ha_cli.configure.rollout_guard import deployment_config, update_command
from hyperpod_ha_cli.configure.samconfig_environment import (
    DeployEnvironment,
    existing_environments,
    write_environment,
)
from hyperpod_ha_cli.errors import RUNTIME_ERROR, USAGE_ERROR, VERIFIED
from hyperpod_ha_cli.options import region_name
from hyperpod_ha_cli.output import result_stream
from hyperpod_ha_cli.stacks import profile_name, user_config_file

if TYPE_CHECKING:
    import boto3

WRITTEN, AWS_ERROR, USAGE = VERIFIED, RUNTIME_ERROR, USAGE_ERROR
# CloudFormation's stack name rule.
_STACK_NAME = re.compile(r"[A-Za-z][-A-Za-z0-9]{0,127}")
_ATTEMPTS = 3  # typed values per parameter before giving up
NOTIFICATION_EMAIL = "NotificationEmail"
NOBODY_TOLD = (
    "no NotificationEmail: nobody is told when a controller fails or the cluster is down; subscribe "
    "people to the stack's topic (output NotificationTopicArn) or configure again with "
    "--notification-email (`hyperpod-ha doctor` fails until a subscription is confirmed)"
)


def add_parser(commands: Any) -> None:
    """`hyperpod-ha configure`: its arguments."""
    configure = commands.add_parser("configure", help="find and write one cluster's deploy settings")
    configure.add_argument("--cluster", required=True, help="the HyperPod cluster's name")
    configure.add_argument("--stack-name", help="default: hyperpod-ha-<cluster>")
    configure.add_argument("--json", action="store_true", help="what was written, as one JSON object")
    configure.add_argument("--multihead-stack", metavar="STACK", help="the multi-head sample stack")
    configure.add_argument(
        "--region", type=region_name, help="default: the profile's or the environment's region"
    )
    configure.add_argument("--profile", type=profile_name, help="an AWS CLI profile")
    configure.add_argument(
        "--config-file", type=Path, help="default: ~/.config/hyperpod-ha/samconfig.toml ($HYPERPOD_HA_CONFIG)"
    )
    configure.add_argument(
        "--notification-email",
        metavar="ADDRESS",
        help="who is told (subscribed to the notification topic); asked when not given, '' for nobody",
    )
    configure.add_argument("--force", action="store_true", help="replace the cluster's existing environment")
    configure.add_argument(
        "--no-input", action="store_true", help="never ask: a missing required value is an error"
    )


def run_configure(args: argparse.Namespace) -> int:
    # What it found, asked and wrote is the command's result: on the result stream (stdout);
    # with --json the one object is, and the rest goes to stderr.
    with contextlib.redirect_stdout(sys.stderr if args.json else result_stream()):
        return _configure(args)


def _configure(args: argparse.Namespace) -> int:
    specs = template_parameters()
    # The user's own file: the checkout's samconfig.toml is tracked (an upgrade would conflict).
    config_file: Path = args.config_file or user_config_file()
    stack_name = args.stack_name or f"hyperpod-ha-{args.cluster}"
    try:
        session = _session(args)
        _check_arguments(args, specs, stack_name, config_file, session)
    except (InputRejected, BotoCoreError) as error:
        return _fail(getattr(error, "reason", str(error)), USAGE)
    try:
        found = _discover(session, args.cluster, args.multihead_stack)
    except (ClientError, BotoCoreError) as error:
        return _fail(f"cannot describe cluster {args.cluster}: {discovery.failure(error)}", AWS_ERROR)
    values = _checked(specs, found)
    _report_found(specs, found, values)
    wanted = _wanted(specs, values, found)
    try:
        if wanted and args.no_input:
            raise InputRejected(_missing_text(wanted, found.unresolved))
        for spec in wanted:
            values[spec.name] = _ask(spec, found.unresolved.get(spec.name), sys.stdin, sys.stdout)
        email = _notification_email(args, specs[NOTIFICATION_EMAIL], sys.stdin, sys.stdout)
        if email:
            values[NOTIFICATION_EMAIL] = email
        parameters = {name: values[name] for name in specs if name in values}
        environment = DeployEnvironment(
            args.cluster, stack_name, str(session.region_name), parameters, args.profile
        )
        config_file.parent.mkdir(parents=True, exist_ok=True)
        write_environment(config_file, environment, force=args.force)
    except InputRejected as error:
        return _fail(error.reason, USAGE)
    if wanted:
        print(f"asked: {', '.join(spec.name for spec in wanted)}")
    warnings = [] if email else [NOBODY_TOLD]
    for warning in warnings:
        print(f"warning: {warning}")
    for name in specs:
        if name not in values and name in found.unresolved:
            print(f"not found, the template's default {specs[name].default!r} applies: {name}")
    print(f"wrote [{args.cluster}.deploy.parameters] to {config_file} (stack {stack_name})")
    deploy = f"sam build && sam deploy --config-file {config_file.resolve()} --config-env {args.cluster}"
    print(f"next, in the checkout: {deploy}")
    group = parameters.get("ControllerGroupName") or str(specs["ControllerGroupName"].default)
    guarded = update_command(args.cluster, str(session.region_name), group, stack_name)
    print(f"then, a controller AMI roll-out guarded by the stack's alarms (docs/operations.md):\n  {guarded}")
    if args.json:
        written = {
            "config_file": str(config_file.resolve()),
            "environment": args.cluster,
            "stack_name": stack_name,
            "region": session.region_name,
            "parameters": parameters,
            "asked": [spec.name for spec in wanted],
            "warnings": warnings,
            "deploy": deploy,
            "rollout_deployment_config": deployment_config(stack_name),
            "exit_code": WRITTEN,
        }
        print(json.dumps(written, indent=2), file=result_stream())
    return WRITTEN


@dataclass(frozen=True)
class Discovered:
    """What the sources gave: values, the parameters without one (and why), the database user
    (informational) and the cluster's instance groups."""

    resolved: dict[str, Resolved]
    unresolved: dict[str, Unresolved]
    username: str | None
    groups: tuple[str, ...]


def _check_arguments(
    args: argparse.Namespace,
    specs: dict[str, ParameterSpec],
    stack_name: str,
    config_file: Path,
    session: boto3.Session,
) -> None:
    """Everything wrong with the command line, before AWS is asked anything."""
    validate(specs["ClusterName"], args.cluster)
    if args.notification_email is not None:
        try:
            validate(specs[NOTIFICATION_EMAIL], args.notification_email)
        except InputRejected as error:
            raise InputRejected(f"--notification-email: {error.reason}") from None
    if not _STACK_NAME.fullmatch(stack_name):
        raise InputRejected(f"--stack-name: {shown(stack_name)!r} is not a CloudFormation stack name")
    if args.multihead_stack is not None and not _STACK_NAME.fullmatch(args.multihead_stack):
        raise InputRejected(f"--multihead-stack: {shown(args.multihead_stack)!r} is not a stack name")
    if args.cluster in existing_environments(config_file) and not args.force:
        raise InputRejected(f"{config_file} already has environment {args.cluster!r} (--force replaces it)")
    if session.region_name is None:
        raise InputRejected("no region: give --region (or a profile or AWS_REGION with one)")


def _session(args: argparse.Namespace) -> boto3.Session:
    import boto3

    return boto3.Session(profile_name=args.profile, region_name=args.region)


def _discover(session: boto3.Session, cluster_name: str, multihead_stack: str | None) -> Discovered:
    """Every source, in the order the later ones need the earlier (the controller group names
    the VPC override and the file system it mounts; provisioning_parameters.json, where the
    lifecycle scripts still have one, names the controller group and the file system too)."""
    cluster: dict[str, Any] = dict(session.client("sagemaker").describe_cluster(ClusterName=cluster_name))
    groups = discovery.group_names(cluster)
    locations = discovery.lifecycle_locations(cluster)
    from_files, files = discovery.from_provisioning(session.client("s3"), locations, groups)
    controller = [*discovery.from_slurm_config(cluster), *from_files]
    found_group = resolve(controller)[0].get("ControllerGroupName")
    controller_group = found_group.value if found_group else None
    named, unnamed = discovery.provisioning_fsx_mounts(files)
    mounts = [*discovery.cluster_fsx_mounts(cluster, controller_group), *named]
    stack_findings, username = discovery.from_stack(session.client("cloudformation"), multihead_stack)
    resolved, unresolved = resolve(
        [
            *controller,
            *discovery.from_cluster(cluster, controller_group),
            *discovery.file_system_id(session.client("fsx"), mounts),
            *unnamed,
            *stack_findings,
        ]
    )
    return Discovered(resolved, unresolved, username, tuple(groups))


def _checked(specs: dict[str, ParameterSpec], found: Discovered) -> dict[str, str]:
    """The found values the template accepts; one it refuses becomes not found, with the rule."""
    values: dict[str, str] = {}
    for name, answer in found.resolved.items():
        try:
            values[name] = validate(specs[name], answer.value)
        except InputRejected as error:
            reason = f"{answer.source} gave a value the template refuses: {error.reason}"
            found.unresolved[name] = Unresolved(name, reason)
    return values


def _wanted(
    specs: dict[str, ParameterSpec], values: dict[str, str], found: Discovered
) -> list[ParameterSpec]:
    """Required parameters still without a value; and the controller group when it was not
    found and the template's default is not one of the cluster's groups (a default that
    names no group would be a guess)."""
    wanted = [spec for name, spec in specs.items() if spec.required and name not in values]
    controller = specs.get("ControllerGroupName")
    reason = found.unresolved.get("ControllerGroupName")
    if controller is None or "ControllerGroupName" in values:
        return wanted
    if reason is not None and reason.conflict:
        wanted.insert(0, controller)
    elif controller.default not in found.groups:
        detail = f"{reason.reason}; " if reason else ""
        groups = ", ".join(found.groups) or "none"
        found.unresolved["ControllerGroupName"] = Unresolved(
            "ControllerGroupName",
            f"{detail}the default {controller.default!r} is not a group of the cluster (groups: {groups})",
        )
        wanted.insert(0, controller)
    return wanted


def _report_found(specs: dict[str, ParameterSpec], found: Discovered, values: dict[str, str]) -> None:
    print("found:")
    for name in specs:
        if name in values:
            print(f"  {name} = {shown(values[name])}  (from {found.resolved[name].source})")
    if found.username:
        print(f"  (the multi-head stack's database user, SlurmDBUsername: {shown(found.username)})")


def _missing_text(wanted: list[ParameterSpec], unresolved: dict[str, Unresolved]) -> str:
    reasons = [
        f"{spec.name} ({unresolved[spec.name].reason if spec.name in unresolved else 'no source'})"
        for spec in wanted
    ]
    return "required values not found (give them interactively, without --no-input): " + "; ".join(reasons)


def _notification_email(args: argparse.Namespace, spec: ParameterSpec, stdin: TextIO, stdout: TextIO) -> str:
    """Who is told: ``--notification-email`` (checked with the arguments), else asked; with
    ``--no-input``, an empty line or the end of input, nobody (the caller warns)."""
    if args.notification_email is not None:
        return validate(spec, args.notification_email)
    if args.no_input:
        return ""
    return _ask(spec, None, stdin, stdout, optional=True)


def _ask(
    spec: ParameterSpec, why: Unresolved | None, stdin: TextIO, stdout: TextIO, optional: bool = False
) -> str:
    """One value typed for ``spec``, checked like a found one; asked again when refused. An
    optional one may be left empty (an empty line, or the end of input)."""
    print(f"{spec.name}: {spec.description}", file=stdout)
    if why is not None:
        print(f"  not found: {why.reason}", file=stdout)
    if optional:
        print("  (optional: an empty line leaves it empty)", file=stdout)
    for _ in range(_ATTEMPTS):
        print(f"  {spec.name}> ", end="", file=stdout, flush=True)
        line = stdin.readline(4097)
        if not line and optional:
            print(file=stdout)
            return ""
        if not line:
            raise InputRejected(f"no value for {spec.name} (end of input)")
        if not stdin.isatty():
            print(file=stdout)  # a terminal echoes the typed line's end; a pipe does not
        try:
            return validate(spec, line.strip())
        except InputRejected as error:
            print(f"  refused: {error.reason}", file=stdout)
    raise InputRejected(f"no acceptable value for {spec.name} after {_ATTEMPTS} tries")


def _fail(reason: str, code: int) -> int:
    print(f"hyperpod-ha: configure: {reason}", file=sys.stderr)
    return code
