"""RotateDbSecretFunction: rotate the Slurm accounting database's secret, then roll it out.

Secrets Manager's rotation steps, or ``{"action": "rollout"}`` alone: see
``hyperpod_ha.rotation.function``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.rotation.function import RotateDbSecretFunction


@cache
def _function() -> RotateDbSecretFunction:
    # On the first invocation, before its event: the feature's modules imported (INIT stays
    # small, see bench/cold_start.py), the settings read (a bad one fails every invocation,
    # naming it), the clients made.
    from hyperpod_ha.rotation.function import RotateDbSecretFunction, RotateDbSecretFunctionSettings

    return RotateDbSecretFunction.from_settings(RotateDbSecretFunctionSettings.from_environment())


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _function().handle(event, context)
