"""What RotateDbSecretFunction calls, made from its settings: Secrets Manager and the database
at once, the rest on first use (a rotation step never runs a command, a roll-out that
succeeds opens no incident)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_secretsmanager import SecretsManagerClient

    from hyperpod_ha.commands import CommandRunner
    from hyperpod_ha.controllers.models import ClusterControllers
    from hyperpod_ha.incidents import Incidents
    from hyperpod_ha.rotation.database import Connector
    from hyperpod_ha.rotation.function_settings import RotateDbSecretSettings
    from hyperpod_ha.status_records import StatusRecords


@dataclass(frozen=True)
class Collaborators:
    """The clients and factories the service calls; tests replace the runner and the discovery."""

    secrets: SecretsManagerClient
    connector: Connector
    runner: Callable[[], CommandRunner]
    discover: Callable[[str, str], ClusterControllers]  # (cluster, group)
    incidents: Callable[[], Incidents]
    records: Callable[[], StatusRecords | None]


def aws_collaborators(settings: RotateDbSecretSettings) -> Collaborators:
    import boto3

    from hyperpod_ha.commands import runner_for
    from hyperpod_ha.controllers.discovery import discover_controllers
    from hyperpod_ha.rotation.database import TlsPolicy, pymysql_connector

    sagemaker = cache(lambda: boto3.client("sagemaker"))

    def incidents() -> Incidents:
        from hyperpod_ha.incidents import Incidents

        return Incidents(boto3.client("ssm"), boto3.client("sns"), settings.incidents)

    def records() -> StatusRecords | None:
        from hyperpod_ha.status_records import StatusRecords

        table = settings.state_table
        return StatusRecords(boto3.client("dynamodb"), table) if table else None

    return Collaborators(
        secrets=boto3.client("secretsmanager"),
        connector=pymysql_connector(TlsPolicy.from_setting(settings.ca_bundle)),
        runner=cache(lambda: runner_for(settings.command_transport)),
        discover=lambda cluster, group: discover_controllers(sagemaker(), cluster, group),
        incidents=incidents,
        records=records,
    )
