"""The verdict: from every controller's health report to one verdict (HEALTHY, FAILED_OVER,
DEGRADED, SPLIT_BRAIN, DOWN, UNKNOWN) with its reasons and evidence, and whether a verification
run checks again before that verdict is final. Pure logic, no AWS calls: it imports only
``hyperpod_ha.controllers`` (the reports), ``hyperpod_ha.slurm``, ``hyperpod_ha.errors``,
``hyperpod_ha.redaction``, ``hyperpod_ha.human_time`` and ``hyperpod_ha.environment`` (and
``function``, EvaluateVerdictFunction, ``hyperpod_ha.observability`` and the early warnings'
pure ``hyperpod_ha.early_warning.rules``, which import this package: never the other modules).
``models`` holds the results; ``reasons`` every reason's code, severity and meaning (a reason
is a code and its text); ``settings`` the policy a verdict is judged by; ``inputs`` decodes
the workflow's JSON; ``observation`` is the cluster as the reports show it (each controller an
``ObservedController``), which the rules read, one module per concern (``activity``: who is
active; ``takeover``: why no backup took over; ``accounting``, ``state_save``, ``scheduling``,
``standbys``, gathered by ``degradation``); ``redundancy`` what is left for the next failover
(the ready standbys, ``full``/``reduced``/``none``/``unknown``, in every verdict);
``evaluation`` gives the verdict, ``evidence`` its
per-controller summary, ``convergence`` when to check again (``NextStep``), ``maintenance`` what
a run does while HyperPod updates the cluster (it waits, then checks again), ``decision`` one
step of a run. The names below are a public contract."""

from hyperpod_ha.verdict.convergence import (
    MAX_SLURMCTLD_TIMEOUT,
    MAX_WAIT_SECONDS,
    next_step,
    parse_time,
)
from hyperpod_ha.verdict.decision import decide
from hyperpod_ha.verdict.evaluation import evaluate
from hyperpod_ha.verdict.inputs import Counters, VerdictRequest, reports_from_json
from hyperpod_ha.verdict.models import (
    DEFAULT_SLURMCTLD_TIMEOUT,
    DEGRADED,
    DOWN,
    FAILED_OVER,
    HEALTHY,
    MAX_REASONS,
    MAX_REPORTS,
    SPLIT_BRAIN,
    UNKNOWN,
    VERDICT_CODES,
    VERIFIED,
    ConvergenceInputError,
    Next,
    NextStep,
    Verdict,
    VerdictInputError,
    VerdictName,
)
from hyperpod_ha.verdict.observation import configured_timeout
from hyperpod_ha.verdict.settings import VerdictPolicy

__all__ = [
    "DEFAULT_SLURMCTLD_TIMEOUT",
    "DEGRADED",
    "DOWN",
    "FAILED_OVER",
    "HEALTHY",
    "MAX_REASONS",
    "MAX_REPORTS",
    "MAX_SLURMCTLD_TIMEOUT",
    "MAX_WAIT_SECONDS",
    "SPLIT_BRAIN",
    "UNKNOWN",
    "VERDICT_CODES",
    "VERIFIED",
    "ConvergenceInputError",
    "Counters",
    "Next",
    "NextStep",
    "Verdict",
    "VerdictInputError",
    "VerdictName",
    "VerdictPolicy",
    "VerdictRequest",
    "configured_timeout",
    "decide",
    "evaluate",
    "next_step",
    "parse_time",
    "reports_from_json",
]
