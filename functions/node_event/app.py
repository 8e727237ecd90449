"""NodeEventFunction: HyperPod EventBridge events -> verification runs, mass-failure and cluster notices."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import metrics, observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.ingestion.node_event_function import NodeEventService

# The service's modules are imported on the first invocation, which needs them anyway: INIT
# stays close to a boto3-only function (see bench/cold_start.py).


@cache
def _service() -> NodeEventService:
    from hyperpod_ha.ingestion.node_event_function import NodeEventService, NodeEventSettings

    return NodeEventService.from_settings(NodeEventSettings.from_environment())


@observed
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _service().handle(event)
