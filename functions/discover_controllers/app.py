"""DiscoverControllersFunction: the cluster's controllers, as the workflow's Map wants them.

Input: ``{"cluster": ...}`` (optional: the stack's own cluster). Output: ``ClusterControllers``
as JSON. Environment: ``CLUSTER_NAME``, ``CONTROLLER_GROUP``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.controllers.function import DiscoverControllersFunction


@cache
def _function() -> DiscoverControllersFunction:
    # On the first invocation, before its event: the feature's modules imported (INIT stays
    # small, see bench/cold_start.py), the settings read (a bad one fails every invocation,
    # naming it), the clients made.
    from hyperpod_ha.controllers.function import (
        DiscoverControllersFunction,
        DiscoverControllersFunctionSettings,
    )

    return DiscoverControllersFunction.from_settings(DiscoverControllersFunctionSettings.from_environment())


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _function().handle(event, context)
