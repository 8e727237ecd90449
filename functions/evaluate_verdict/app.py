"""EvaluateVerdictFunction: the controllers' reports -> one verdict (pure; no AWS calls).

Input and output: :mod:`hyperpod_ha.verdict.inputs` and :mod:`hyperpod_ha.verdict.decision`.
Environment: ``EXPECTED_STATE_FSTYPES`` (:class:`hyperpod_ha.verdict.VerdictPolicy`).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any, Final

from hyperpod_ha.observability import logger, observed
from hyperpod_ha.verdict import VerdictPolicy, VerdictRequest, decide

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

LOGGED: Final = ("verdict", "active_controller", "reasons", "next", "wait_seconds", "converged_by")


@cache
def _policy() -> VerdictPolicy:
    return VerdictPolicy.from_environment()


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    policy = _policy()  # before the event: a bad setting fails every invocation, naming it
    result = decide(VerdictRequest.from_event(event), policy)
    logger.info("verdict", extra={key: result.get(key) for key in LOGGED})
    return result
