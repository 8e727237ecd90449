"""The database secret as a controller's instance role would read it, for the lab's nodes."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import boto3

from hyperpod_ha.rotation.secret import AWSCURRENT


class NodeSecret:
    """Stands in for a controller's instance role reading the database secret.

    On HyperPod the roll-out's node script runs ``aws secretsmanager get-secret-value`` itself.
    The lab's nodes cannot reach the in-process Secrets Manager, so for the length of one
    request that names a ``secretId``, its AWSCURRENT value sits in a root-only file (mode
    600 in a directory of mode 700) that the node script reads with ``cat`` through
    ``SLURMDBD_SECRET_COMMAND``; the file is removed as soon as the request ends. The directory
    is the lab's own (``LabPaths.node_secret_dir``): what a killed run left there is removed
    before this one starts, and ``close`` removes the directory.
    """

    def __init__(self, directory: Path) -> None:
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(mode=0o700, parents=True)
        self._directory = directory
        self.path = directory / "secret.json"

    @property
    def command(self) -> str:
        return f"cat {self.path}"

    @contextlib.contextmanager
    def serving(self, secret_id: str | None) -> Iterator[None]:
        if secret_id is None:
            yield
            return
        value = boto3.client("secretsmanager").get_secret_value(SecretId=secret_id, VersionStage=AWSCURRENT)
        descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(value["SecretString"])
        try:
            yield
        finally:
            self.path.unlink(missing_ok=True)

    def close(self) -> None:
        shutil.rmtree(self._directory, ignore_errors=True)
