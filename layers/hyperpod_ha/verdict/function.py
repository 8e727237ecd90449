"""EvaluateVerdictFunction and its settings: the controllers' reports -> one verdict, and what
the run does next (:func:`hyperpod_ha.verdict.decide`); pure, no AWS calls. A run's final
verdict is also the dashboard's current verdict (the metric ``VerdictCode``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from hyperpod_ha.environment import Settings
from hyperpod_ha.observability import logger, metrics
from hyperpod_ha.verdict.decision import decide
from hyperpod_ha.verdict.inputs import VerdictRequest
from hyperpod_ha.verdict.models import VERDICT_CODES, VerdictName
from hyperpod_ha.verdict.settings import VerdictPolicy

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

LOGGED: Final = ("verdict", "active_controller", "reasons", "next", "wait_seconds", "converged_by")
# The steps after which a verification run's verdict is final. A verdict the run will check
# again (a failover still in progress) is not the cluster's yet, nor is a drill's check (called
# without counters, inside its recovery loop: a moment of DOWN there is the drill's own doing).
FINAL: Final = frozenset({"verified", "not-verified"})


@dataclass(frozen=True)
class EvaluateVerdictFunctionSettings(Settings):
    """EvaluateVerdictFunction's environment: the policy a verdict is judged by."""

    policy: VerdictPolicy


@dataclass(frozen=True)
class EvaluateVerdictFunction:
    policy: VerdictPolicy

    @classmethod
    def from_settings(cls, settings: EvaluateVerdictFunctionSettings) -> EvaluateVerdictFunction:
        return cls(settings.policy)  # no clients: the verdict calls nothing

    def handle(self, event: object, context: LambdaContext) -> dict[str, Any]:
        result = decide(VerdictRequest.from_event(event), self.policy)
        logger.info("verdict", extra={key: result.get(key) for key in LOGGED})
        if result.get("next") in FINAL:
            code = VERDICT_CODES[VerdictName(result["verdict"])]
            metrics.add_metric(name="VerdictCode", unit="None", value=code)
            metrics.flush_metrics()
        return result
