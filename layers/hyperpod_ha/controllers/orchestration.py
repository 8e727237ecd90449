"""How HyperPod runs the cluster's Slurm, from ``DescribeCluster``'s ``Orchestrator.Slurm``:
``SlurmConfigStrategy`` (``Overwrite | Managed | Merge``: HyperPod's cluster agent writes
slurm.conf) and ``AccountingDatabase`` (an external accounting database HyperPod configures
slurmdbd for). Both optional; every field bounded as botocore's model bounds it, a field out of
its bounds is dropped (logged), never a failed discovery."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hyperpod_ha.observability import logger

KNOWN_CONFIG_STRATEGIES = frozenset({"Overwrite", "Managed", "Merge"})
# botocore's ClusterAccountingDatabase* shapes.
_ENDPOINT = re.compile(r"^[A-Za-z0-9.-]{1,255}$")
_NAME = re.compile(r"^[A-Za-z0-9$_]{1,64}$")
_SECRET_ARN = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]*:[0-9]{12}:secret:[^\s]{1,2000}$")
_STRATEGY = re.compile(r"^[A-Za-z]{1,32}$")

AccountingMode = Literal["external", "internal"]


@dataclass(frozen=True)
class AccountingDatabase:
    endpoint: str
    secret_arn: str
    port: int | None = None
    name: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "port": self.port,
            "name": self.name,
            "secret_arn": self.secret_arn,
        }


@dataclass(frozen=True)
class SlurmOrchestration:
    config_strategy: str | None = None
    database: AccountingDatabase | None = None

    @property
    def mode(self) -> AccountingMode:
        """``external``: HyperPod configures slurmdbd for its own database (cannot be reverted)."""
        return "external" if self.database is not None else "internal"

    def describe(self) -> str:
        strategy = f", SlurmConfigStrategy {self.config_strategy}" if self.config_strategy else ""
        if self.database is None:
            return f"internal accounting database (the controllers' slurmdbd.conf){strategy}"
        where = f"{self.database.endpoint} (Orchestrator.Slurm.AccountingDatabase)"
        return f"external accounting database {where}{strategy}"

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "config_strategy": self.config_strategy,
            "database": self.database.to_json() if self.database else None,
        }


def orchestration_of(described: Mapping[str, Any]) -> SlurmOrchestration:
    """``Orchestrator.Slurm`` of a DescribeCluster answer; empty when there is none."""
    orchestrator = described.get("Orchestrator")
    slurm = orchestrator.get("Slurm") if isinstance(orchestrator, Mapping) else None
    if not isinstance(slurm, Mapping):
        return SlurmOrchestration()
    strategy = _bounded(slurm.get("SlurmConfigStrategy"), _STRATEGY, "SlurmConfigStrategy")
    if strategy is not None and strategy not in KNOWN_CONFIG_STRATEGIES:
        logger.info("unknown SlurmConfigStrategy accepted", extra={"config_strategy": strategy})
    return SlurmOrchestration(config_strategy=strategy, database=_database(slurm.get("AccountingDatabase")))


def _database(raw: object) -> AccountingDatabase | None:
    if not isinstance(raw, Mapping):
        return None
    endpoint = _bounded(raw.get("Endpoint"), _ENDPOINT, "AccountingDatabase.Endpoint")
    secret_arn = _bounded(raw.get("SecretArn"), _SECRET_ARN, "AccountingDatabase.SecretArn")
    if endpoint is None or secret_arn is None:
        # Both are required by the model: an AccountingDatabase key still means "external".
        logger.warning("AccountingDatabase without a readable Endpoint or SecretArn")
    port = raw.get("Port")
    if not (isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535):
        port = None
    return AccountingDatabase(
        endpoint=endpoint or "(unreadable endpoint)",
        secret_arn=secret_arn or "",
        port=port,
        name=_bounded(raw.get("Name"), _NAME, "AccountingDatabase.Name"),
    )


def _bounded(value: object, pattern: re.Pattern[str], field: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and pattern.match(value):
        return value
    logger.warning("field out of its bounds dropped", extra={"field": field})
    return None
