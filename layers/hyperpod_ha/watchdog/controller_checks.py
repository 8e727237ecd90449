"""Every controller of the cluster checked at once, a few at a time."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Final

from hyperpod_ha.controllers.check import controller_report
from hyperpod_ha.controllers.errors import ControllerCheckThrottled
from hyperpod_ha.controllers.models import ClusterControllers, Controller, ControllerReport, ReportStatus

# Session Manager starts are rate limited (a few per second): a few controllers at a time.
MAX_PARALLEL_CHECKS: Final = 4


def check_every_controller(
    found: ClusterControllers, check: Callable[[Controller], ControllerReport]
) -> list[ControllerReport]:
    nodes = list(found.controllers)
    if not nodes:
        return []
    with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_CHECKS, len(nodes))) as pool:
        return list(pool.map(lambda node: _checked(node, check), nodes))


def _checked(node: Controller, check: Callable[[Controller], ControllerReport]) -> ControllerReport:
    try:
        return check(node)
    except ControllerCheckThrottled as error:
        # Not retried here: the workflow's checks retry throttling with backoff.
        return controller_report(node, ReportStatus.PROBE_FAILED, reason=str(error)[:200])
