"""RestoreRedundancyFunction: one step of the restore state machine (``action`` picks it).

See ``hyperpod_ha.restore.steps``. ``RestoreCommandFailed`` and ``InvalidRestoreRequest`` propagate
for the state machine's Catch.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.restore.function import RestoreRedundancyFunction


@cache
def _function() -> RestoreRedundancyFunction:
    # On the first invocation, before its event: the feature's modules imported (INIT stays
    # small, see bench/cold_start.py), the settings read (a bad one fails every invocation,
    # naming it), the clients made.
    from hyperpod_ha.restore.function import RestoreRedundancyFunction, RestoreRedundancyFunctionSettings

    return RestoreRedundancyFunction.from_settings(RestoreRedundancyFunctionSettings.from_environment())


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _function().handle(event, context)
