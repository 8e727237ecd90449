"""The AWS account a command talks to: ``--region``/``--profile``, else samconfig.toml's (the
``--cluster``'s own environment first, then ``default``), else the SDK's defaults (environment,
shared config). Set once, before the command's first client."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import ProfileNotFound

from hyperpod_ha_dev.cli.errors import CommandError
from hyperpod_ha_dev.cli.samconfig import read_deploy_config


def add_account_options(parser: Any) -> None:
    parser.add_argument("--region", help="the stack's region (default: samconfig.toml's, else the SDK's)")
    parser.add_argument("--profile", help="the AWS profile (default: samconfig.toml's, else the SDK's)")


def use_deployed_account(args: argparse.Namespace, root: Path) -> boto3.Session:
    """The session every later ``boto3.client`` of this process uses (the runtime's included)."""
    config = read_deploy_config(root, cluster=getattr(args, "cluster", None))
    region = getattr(args, "region", None) or config.region
    profile = getattr(args, "profile", None) or config.profile
    try:
        session = boto3.Session(region_name=region, profile_name=profile)
    except ProfileNotFound as error:
        raise CommandError(f"{error}: give an existing --profile") from None
    if not session.region_name:
        raise CommandError(
            "no AWS region: give --region, set AWS_REGION (or AWS_DEFAULT_REGION), "
            "or put region in samconfig.toml"
        )
    # The functions invoked in process read the region from the environment, as in Lambda.
    os.environ["AWS_REGION"] = os.environ["AWS_DEFAULT_REGION"] = session.region_name
    if profile:
        os.environ["AWS_PROFILE"] = profile
    boto3.DEFAULT_SESSION = session
    return session
