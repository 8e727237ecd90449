"""NoticeFunction: an AWS event the stack tells people about (a failed rotation of the database
secret, a state change of one of its alarms) -> one message in the one form on the topic."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import metrics, observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.notices.function import NoticeFunction


@cache
def _function() -> NoticeFunction:
    # On the first invocation, before its event: the feature's modules imported (INIT stays
    # small, see bench/cold_start.py), the settings read (a bad one fails every invocation,
    # naming it), the clients made.
    from hyperpod_ha.notices.function import NoticeFunction, NoticeFunctionSettings

    return NoticeFunction.from_settings(NoticeFunctionSettings.from_environment())


@observed
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _function().handle(event, context)
