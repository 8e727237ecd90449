"""``hyperpod-ha status --embedded`` and ``--lab``: the status view of the embedded stack as
created, or of the lab's embedded stack as its last drill left it."""

from __future__ import annotations

from typing import Any

from hyperpod_ha_cli.errors import UsageError
from hyperpod_ha_cli.stacks import Target, stack_for_cluster
from hyperpod_ha_cli.status import cluster_status
from hyperpod_ha_dev.cli import project_root


def embedded_status(cluster: str) -> dict[str, Any]:
    """The embedded stack as created (nothing has run on it yet, so nothing is recorded):
    ``simulate <scenario> --status`` shows it after a scenario."""
    from hyperpod_ha_dev.embedded.site import create_site, embedded_aws
    from hyperpod_ha_dev.embedded.stack import create_stack

    with embedded_aws():
        site = create_site()
        stack = create_stack(project_root(), site.stack_parameters())
        target = Target(cluster, stack.name, None, None, {"stack_name": "the embedded stack"})
        return cluster_status(stack_for_cluster(target), cluster)


def lab_status(cluster: str) -> dict[str, Any]:
    from hyperpod_ha_dev.simulation.lab.drill_run import saved_status

    status = saved_status()
    if status is None:
        raise UsageError("no drill has run against the lab yet: hyperpod-ha drill start --lab")
    if status.get("cluster") != cluster:
        raise UsageError(
            f"the lab's embedded stack watches cluster {status.get('cluster')!r}, not {cluster!r}"
        )
    return status
