"""EvaluateVerdictFunction and its settings: the controllers' reports -> one verdict, and what
the run does next (:func:`hyperpod_ha.verdict.decide`); pure, no AWS calls. A run's final
verdict is also the dashboard's current verdict (the metric ``VerdictCode``).

Beside the verdict, ``warnings``: the early warnings this check's sdiag of the serving
controller shows (:func:`hyperpod_ha.early_warning.rules.one_check_warnings`, the watchdog's
rules and thresholds), each with its ``kind``, ``codes`` and ``reasons``. They are told, never
weighed: the verdict, its next step and its incident are the same with or without them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from hyperpod_ha.early_warning.rules import one_check_warnings
from hyperpod_ha.early_warning.settings import WarningThresholds
from hyperpod_ha.environment import Settings
from hyperpod_ha.observability import logger, metrics
from hyperpod_ha.verdict.decision import decide, judge
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
    """EvaluateVerdictFunction's environment: the policy a verdict is judged by, and the early
    warnings' thresholds (the watchdog's parameters: a run warns as a tick does)."""

    policy: VerdictPolicy
    thresholds: WarningThresholds = field(default_factory=WarningThresholds)


@dataclass(frozen=True)
class EvaluateVerdictFunction:
    policy: VerdictPolicy
    thresholds: WarningThresholds = field(default_factory=WarningThresholds)

    @classmethod
    def from_settings(cls, settings: EvaluateVerdictFunctionSettings) -> EvaluateVerdictFunction:
        return cls(settings.policy, settings.thresholds)  # no clients: the verdict calls nothing

    def handle(self, event: object, context: LambdaContext) -> dict[str, Any]:
        request = VerdictRequest.from_event(event)
        verdict = judge(request, self.policy)
        result = decide(request, self.policy, verdict=verdict)
        # Told in the run's verdict, but no incident from here: the watchdog is the one that opens
        # a warning's incident (once it held over its window, de-duplicated per cluster and kind)
        # and resolves it; a run has no window and would open one per attempt and per trigger.
        warnings = one_check_warnings(verdict, request.reports, self.thresholds)
        result["warnings"] = [warning.to_json() for warning in warnings]
        logger.info(
            "verdict",
            extra={
                **{key: result.get(key) for key in LOGGED},
                "warnings": [code for warning in warnings for code in warning.codes],
            },
        )
        if result.get("next") in FINAL:
            code = VERDICT_CODES[VerdictName(result["verdict"])]
            metrics.add_metric(name="VerdictCode", unit="None", value=code)
            metrics.flush_metrics()
        return result
