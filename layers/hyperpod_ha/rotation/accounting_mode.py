"""The rotation refuses a cluster whose accounting database HyperPod configures itself
(``Orchestrator.Slurm.AccountingDatabase``): the roll-out that rewrites every controller's
slurmdbd.conf would fight HyperPod, and no public page says how HyperPod picks up a rotated
secret then. Checked with DescribeCluster before ``createSecret`` and again before
``setSecret`` (the database changes only at setSecret), so nothing changes and AWSCURRENT
keeps working."""

from __future__ import annotations

from collections.abc import Callable

from hyperpod_ha.controllers.orchestration import SlurmOrchestration
from hyperpod_ha.observability import logger
from hyperpod_ha.rotation.errors import ExternalAccountingDatabase


def refuse_external_database(cluster: str, orchestration: Callable[[], SlurmOrchestration]) -> None:
    """Raise :class:`ExternalAccountingDatabase` when HyperPod manages the accounting database."""
    found = orchestration()
    if found.mode != "external":
        return
    error = ExternalAccountingDatabase(
        f"cluster {cluster} uses an {found.describe()}: HyperPod configures slurmdbd, so this "
        "stack does not rotate or roll out its credentials; nothing was changed",
        mode=found.mode,
    )
    logger.error("rotation refused", extra={"cluster": cluster, "accounting_mode": found.mode})
    raise error
