"""The database secret as a controller's instance role would read it, for the lab's nodes."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import boto3

from hyperpod_ha.rotation.secret import AWSCURRENT
from hyperpod_ha_dev.simulation import node_aws_cli

# The lab's hosts run their commands with the machine's own python3 (their PATH is the system's).
INTERPRETER = "/usr/bin/env python3"


class NodeSecret:
    """Stands in for a controller's AWS CLI and instance role reading the database secret.

    On HyperPod the roll-out's node script runs ``aws secretsmanager get-secret-value`` itself,
    and it has no other way to get the secret. The lab's nodes cannot reach the in-process
    Secrets Manager, so the lab's agent puts :attr:`tools` first on their commands' PATH: a
    stand-in ``aws`` (``node_aws_cli``) that, for the length of one request that names a
    ``secretId``, answers that secret's AWSCURRENT value from a root-only file (mode 600 in a
    directory of mode 700), removed as soon as the request ends. The directory is the lab's own
    (``LabPaths.node_secret_dir``): what a killed run left there is removed before this one
    starts, and ``close`` removes the directory.
    """

    def __init__(self, directory: Path) -> None:
        shutil.rmtree(directory, ignore_errors=True)
        node_aws_cli.install(directory, INTERPRETER)
        self._directory = directory

    @property
    def tools(self) -> Path:
        """Put first on the PATH of the lab's node commands: the stand-in ``aws``."""
        return self._directory

    @contextlib.contextmanager
    def serving(self, secret_id: str | None) -> Iterator[None]:
        if secret_id is None:
            yield
            return
        value = boto3.client("secretsmanager").get_secret_value(SecretId=secret_id, VersionStage=AWSCURRENT)
        node_aws_cli.serve(self._directory, secret_id, value["SecretString"])
        try:
            yield
        finally:
            node_aws_cli.withdraw(self._directory)

    def close(self) -> None:
        shutil.rmtree(self._directory, ignore_errors=True)
