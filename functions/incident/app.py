"""IncidentFunction: open an incident (OpsCenter, Incident Manager, notification) or resolve them.

``{"action": "open" | "resolve", ...}``; see ``hyperpod_ha.incidents``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import metrics, observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.incidents.service import IncidentService


@cache
def _service() -> IncidentService:
    """Settings read and clients made once per container, on its first invocation."""
    from hyperpod_ha.incidents import IncidentFunctionSettings
    from hyperpod_ha.incidents.service import IncidentService

    return IncidentService.from_settings(IncidentFunctionSettings.from_environment())


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        return _service().handle(event, context)
    finally:
        if metrics.metric_set:  # a failed step emits nothing: no empty-metrics warning
            metrics.flush_metrics()
