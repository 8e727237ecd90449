"""What RotateDbSecretFunction calls: Secrets Manager and the database at once, the rest made on
first use (a rotation step never runs a command, a roll-out that succeeds opens no incident).
:func:`hyperpod_ha.rotation.function.aws_collaborators` makes the real ones; tests replace the
runner and the discovery."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_secretsmanager import SecretsManagerClient

    from hyperpod_ha.commands import CommandRunner
    from hyperpod_ha.controllers.models import ClusterControllers
    from hyperpod_ha.incidents import Incidents
    from hyperpod_ha.rotation.database import Connector
    from hyperpod_ha.rotation.lease import RolloutLease
    from hyperpod_ha.status_records import StatusRecords


@dataclass(frozen=True)
class Collaborators:
    """The clients and factories the function calls."""

    secrets: SecretsManagerClient
    connector: Connector
    runner: Callable[[], CommandRunner]
    discover: Callable[[str, str], ClusterControllers]  # (cluster, group)
    incidents: Callable[[], Incidents]
    records: Callable[[], StatusRecords | None]
    lease: Callable[[], RolloutLease]  # the cluster's lease, as a roll-out holds it
    # (lease id, triggers joined) -> the verification run started (or joined) after a roll-out.
    verify_after: Callable[[str, int], str]
