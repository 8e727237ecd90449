"""IncidentFunction: open an incident (OpsCenter, Incident Manager, notification), resolve them, or
note a restore's actions on the open ones.

``{"action": "open" | "resolve" | "note", ...}``; see ``hyperpod_ha.incidents``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.incidents.function import IncidentFunction


@cache
def _function() -> IncidentFunction:
    # On the first invocation, before its event: the feature's modules imported (INIT stays
    # small, see bench/cold_start.py), the settings read (a bad one fails every invocation,
    # naming it), the clients made.
    from hyperpod_ha.incidents.function import IncidentFunction, IncidentFunctionSettings

    return IncidentFunction.from_settings(IncidentFunctionSettings.from_environment())


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _function().handle(event, context)
