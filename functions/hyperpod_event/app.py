"""HyperPodEventFunction: HyperPod's EventBridge events -> verification runs and notices."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import metrics, observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.ingestion.function import HyperPodEventFunction


@cache
def _function() -> HyperPodEventFunction:
    # On the first invocation, before its event: the feature's modules imported (INIT stays
    # small, see bench/cold_start.py), the settings read (a bad one fails every invocation,
    # naming it), the clients made.
    from hyperpod_ha.ingestion.function import HyperPodEventFunction, HyperPodEventFunctionSettings

    return HyperPodEventFunction.from_settings(HyperPodEventFunctionSettings.from_environment())


@observed
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _function().handle(event, context)
