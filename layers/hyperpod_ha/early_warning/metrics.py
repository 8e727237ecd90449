"""A tick's figures as CloudWatch metrics (Powertools' embedded metric format, written to the
log: no PutMetricData call).

Per controller, with the dimensions ``service``, ``cluster``, ``controller`` and ``role``
(``active`` or ``standby``: the dashboard's lines name who served): sdiag's figures for the
active one, what its own node timed for each. Two of them again per cluster only
(``ActiveServerThreads``, ``DbdAgentQueuePercent``), the series an alarm reads whichever
controller serves. Each metric name, unit and figure is one row below; the cost per
cluster-month of them is ``bench/early_warning.py``'s."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

from hyperpod_ha.early_warning.models import ControllerFigures
from hyperpod_ha.observability import metric_dimensions, metrics

# (metric, unit, figure): the active controller's, then every controller's.
ACTIVE_METRICS: Final = (
    ("ServerThreads", MetricUnit.Count, "server_threads"),
    ("AgentQueue", MetricUnit.Count, "agent_queue"),
    ("DbdAgentQueue", MetricUnit.Count, "dbd_agent_queue"),
    ("RpcAverageMs", MetricUnit.Milliseconds, "rpc_average_ms"),
    ("MainCycleMs", MetricUnit.Milliseconds, "main_cycle_last_ms"),
    ("BackfillCycleMs", MetricUnit.Milliseconds, "backfill_cycle_last_ms"),
)
NODE_METRICS: Final = (
    ("RoundTripMs", MetricUnit.Milliseconds, "round_trip_ms"),
    ("HeartbeatLagSeconds", MetricUnit.Seconds, "heartbeat_lag_seconds"),
    ("StateSaveWriteMs", MetricUnit.Milliseconds, "state_save_write_ms"),
)
CLUSTER_METRICS: Final = ("ActiveServerThreads", "DbdAgentQueuePercent")


def emit_figures(cluster: str, figures: Sequence[ControllerFigures]) -> int:
    """Write each controller's figures (one EMF document each); the number of data written."""
    written = 0
    for one in figures:
        rows = (ACTIVE_METRICS if one.active else ()) + NODE_METRICS
        values = [(name, unit, getattr(one, figure)) for name, unit, figure in rows]
        values = [(name, unit, value) for name, unit, value in values if value is not None]
        if not values:
            continue
        emf = EphemeralMetrics(namespace=metrics.namespace)
        emf.set_default_dimensions(
            **{**metric_dimensions(), "cluster": cluster, "controller": one.controller, "role": one.role}
        )
        for name, unit, value in values:
            emf.add_metric(name=name, unit=unit, value=value)
        emf.flush_metrics()
        written += len(values)
    active = next((one for one in figures if one.active), None)
    if active is None:
        return written
    per_cluster: list[tuple[str, MetricUnit, float]] = []
    if active.server_threads is not None:
        per_cluster.append(("ActiveServerThreads", MetricUnit.Count, active.server_threads))
    if active.dbd_agent_queue is not None and active.max_dbd_msgs:
        percent = round(100 * active.dbd_agent_queue / active.max_dbd_msgs, 2)
        per_cluster.append(("DbdAgentQueuePercent", MetricUnit.Percent, percent))
    if per_cluster:
        emf = EphemeralMetrics(namespace=metrics.namespace)
        emf.set_default_dimensions(**{**metric_dimensions(), "cluster": cluster})
        for name, unit, value in per_cluster:
            emf.add_metric(name=name, unit=unit, value=value)
        emf.flush_metrics()
    return written + len(per_cluster)
