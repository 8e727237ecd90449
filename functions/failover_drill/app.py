"""FailoverDrillFunction: one step of the failover drill state machine (``action`` picks it).

See ``hyperpod_ha.drill.steps``; settings: ``hyperpod_ha.drill.settings.DrillSettings``.
``DrillCommandFailed`` and ``InvalidDrillRequest`` propagate for the state machine's Catch,
which writes the drill report with the error.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.drill.steps import DrillContext

# The drill's modules are imported on the first invocation, which needs them anyway: INIT
# stays close to a boto3-only function (see bench/cold_start.py).


@cache
def _context() -> DrillContext:
    """Settings read and checked, clients made, once per container on its first invocation."""
    from hyperpod_ha.drill.drill_function import drill_context
    from hyperpod_ha.drill.settings import DrillSettings

    return drill_context(DrillSettings.from_environment())


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    from hyperpod_ha.drill.drill_function import run_logged_step

    return run_logged_step(event, _context())
