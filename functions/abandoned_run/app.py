"""AbandonedRunFunction: a verification run or drill stopped, timed out, or failed holding its
lease -> lease released, incident opened."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.runs.abandoned_cleanup import AbandonedRunCleanup


@cache
def _cleanup() -> AbandonedRunCleanup:
    from hyperpod_ha.runs.abandoned_cleanup import AbandonedRunCleanup, AbandonedRunSettings

    return AbandonedRunCleanup.from_settings(AbandonedRunSettings.from_environment())


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _cleanup().handle(event)
