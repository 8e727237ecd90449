"""Logger and metrics in one place, so every handler is set up the same way.

Every log line goes through the one redaction path. Powertools reads its settings (log level,
metrics namespace) from the environment the template gives each function. Tracing is Lambda's
and Step Functions' own (``Tracing: Active`` and the state machines' tracing configuration): no
X-Ray SDK is shipped (its support ends 2027-02-25).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar, cast

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

from hyperpod_ha.redaction import redact

Handler = TypeVar("Handler", bound=Callable[..., Any])

# The service every log line and metric carries: each function's POWERTOOLS_SERVICE_NAME
# (template.yaml's Globals; tests/unit/test_generated.py checks), what a process that is no
# function (the CLI, the lab) calls itself, and the ``service`` dimension the generated alarms
# and dashboard read (hyperpod_ha_stack.alarms, hyperpod_ha_stack.dashboard).
SERVICE: Final = "hyperpod-ha"


class RedactingFormatter(LambdaPowertoolsFormatter):
    """Powertools' JSON log lines, each through the one redaction path: a reason, an excerpt of
    node output or an exception's text passed in ``extra=`` does not reach CloudWatch whole."""

    def serialize(self, log: Mapping[str, Any]) -> str:
        return super().serialize(redact(log))


logger = Logger(
    service=os.environ.get("POWERTOOLS_SERVICE_NAME") or SERVICE,
    logger_formatter=RedactingFormatter(),
)
# The template sets the namespace; a process that imports this before any function's
# environment is set (the CLI, the lab) gets the same one.
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "HyperPodHA")


def service_name() -> str:
    """The function's ``POWERTOOLS_SERVICE_NAME``, read when it runs (not when this was imported)."""
    return os.environ.get("POWERTOOLS_SERVICE_NAME") or SERVICE


def metric_dimensions() -> dict[str, str]:
    """Every metric's dimensions: the function's service and its stack's cluster (a stack, so
    each of its functions, serves one cluster: ``CLUSTER_NAME``), so two stacks in a region
    never add to each other's dashboard or alarms. A process with no cluster (the CLI, the lab)
    has the service alone."""
    cluster = os.environ.get("CLUSTER_NAME")
    return {"service": service_name(), **({"cluster": cluster} if cluster else {})}


def observed(handler: Handler) -> Handler:
    """A handler's logging context: the Lambda context on every line, state cleared per
    invocation, and the service name of the function's own environment on logs and metrics,
    with its cluster on metrics (:func:`metric_dimensions`).

    The Logger and Metrics are made once per process, at import; in process (``make demo``,
    ``hyperpod-ha invoke``) that is before a function's environment is set, so the name is
    applied again at each invocation, as deployed functions have it from the start.
    """

    @functools.wraps(handler)
    def named(event: Any, context: Any) -> Any:
        dimensions = metric_dimensions()
        logger.append_keys(service=dimensions["service"])
        if metrics.default_dimensions != dimensions:  # once per container, before any metric
            metrics.clear_default_dimensions()
            metrics.clear_metrics()  # also the dimensions already set, a cluster no longer ours
            metrics.set_default_dimensions(**dimensions)
        return handler(event, context)

    return cast(Handler, logger.inject_lambda_context(clear_state=True)(named))


def add_cluster_metric(name: str, value: float, cluster: str) -> None:
    """One datum of ``name`` with the dimensions ``service`` and ``cluster`` (a per-cluster
    metric an alarm reads), written at once beside the function's other metrics. The cluster is
    the one the caller names, whatever the process's defaults hold (the CLI and the lab have none)."""
    from aws_lambda_powertools.metrics import MetricUnit, single_metric

    dimensions = {**metric_dimensions(), "cluster": cluster}
    with single_metric(
        name=name,
        unit=MetricUnit.Count,
        value=value,
        namespace=metrics.namespace,
        default_dimensions=dimensions,
    ):
        pass
