"""AbandonedRunFunction: a verification run or drill stopped, timed out, or failed holding its
lease -> lease released, incident opened."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import logger, tracer

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.runs.abandoned_cleanup import AbandonedRunCleanup


@cache
def _cleanup() -> AbandonedRunCleanup:
    from hyperpod_ha.runs.abandoned_cleanup import AbandonedRunCleanup, AbandonedRunSettings

    return AbandonedRunCleanup.from_settings(AbandonedRunSettings.from_environment())


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _cleanup().handle(event)
