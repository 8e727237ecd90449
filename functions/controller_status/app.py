"""ControllerStatusFunction: SNS "Slurm Controller Status Change" -> start or join a verification."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import metrics, observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.ingestion.controller_status_function import ControllerStatusService

# The service's modules are imported on the first invocation, which needs them anyway: INIT
# stays close to a boto3-only function (see bench/cold_start.py).


@cache
def _service() -> ControllerStatusService:
    from hyperpod_ha.ingestion.controller_status_function import (
        ControllerStatusService,
        ControllerStatusSettings,
    )

    return ControllerStatusService.from_settings(ControllerStatusSettings.from_environment())


@observed
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _service().handle(event, context)
