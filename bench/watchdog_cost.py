"""What the watchdog costs per cluster-month at the template's default rate, at list prices.

Ticks are delivered from the template's schedule (``EmbeddedStack.tick``) to the real
WatchdogFunction on the embedded stack, whose probe runs on the simulated ``healthy`` cluster
(the steady state: a tick that finds a failure starts a verification run, priced by
``bench.workflow_cost``). In a fresh interpreter, as ``bench.workflow_cost`` runs its
scenarios, each handler run is timed, every AWS call the handler makes is counted by
service and operation, and what it writes to stdout (its CloudWatch Logs) is counted in bytes.

Priced like the workflow cost (Lambda arm64 duration and requests, :data:`bench.workflow_cost.PRICES`),
plus what a tick adds: one EventBridge Scheduler invocation, one X-Ray trace (``Tracing:
Active``), DynamoDB reads and log ingestion. Free tiers are ignored.
"""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from bench import ROOT
from bench.lambda_functions import template_functions
from bench.stats import at_most, median
from bench.workflow_cost import PRICES, Prices

FUNCTION: Final = "WatchdogFunction"
TICKS: Final = 8
TARGET_USD_PER_MONTH: Final = 1.0
# The fastest rate WatchdogRateMinutes allows: what detecting a dead standby within a minute costs.
FASTEST_RATE_MINUTES: Final = 1
HOURS_PER_MONTH: Final = 730  # AWS's own month in its price examples
CHILD_TIMEOUT_SECONDS: Final = 300.0
# What a tick adds beyond Lambda, us-east-1 list prices consulted 2026-11-30 (free tiers ignored).
TICK_PRICES: Final = {
    "scheduler_per_million_invocations": 1.00,
    "xray_per_million_traces_recorded": 5.00,
    "dynamodb_on_demand_per_million_read_units": 0.125,
    "dynamodb_on_demand_per_million_write_units": 0.625,
    "cloudwatch_logs_ingestion_per_gb": 0.50,
    # Each metric (name and dimensions) a month, the first 10,000 metrics' tier.
    "cloudwatch_custom_metric_per_month": 0.30,
}
TICK_PRICE_SOURCES: Final = (
    {
        "url": "https://aws.amazon.com/eventbridge/pricing/",
        "figure": "EventBridge Scheduler: $1.00 per million scheduled invocations (14 million free a month)",
    },
    {
        "url": "https://aws.amazon.com/xray/pricing/",
        "figure": "traces recorded: $5.00 per million (100,000 free a month)",
    },
    {
        "url": "https://aws.amazon.com/dynamodb/pricing/on-demand/",
        "figure": "on-demand, US East (N. Virginia): $0.125 per million read request units, "
        "$0.625 per million write request units",
    },
    {
        "url": "https://aws.amazon.com/cloudwatch/pricing/",
        "figure": "Logs, standard ingestion: $0.50 per GB; custom metrics: $0.30 per metric a month "
        "(first 10,000; a metric written through the embedded metric format is one too)",
    },
)
DYNAMODB_WRITES: Final = frozenset({"PutItem", "UpdateItem", "DeleteItem"})


def default_rate_minutes(root: Path = ROOT) -> int:
    from hyperpod_ha_stack.template import load_template

    return int(load_template(root / "template.yaml")["Parameters"]["WatchdogRateMinutes"]["Default"])


def ticks_per_month(rate_minutes: int) -> float:
    return HOURS_PER_MONTH * 60 / rate_minutes if rate_minutes > 0 else 0.0


def price_per_month(
    ticks: float,
    memory_mb: int,
    billed_ms: float,
    calls_per_tick: Mapping[str, float],
    log_bytes_per_tick: float,
    prices: Prices = PRICES,
) -> dict[str, float]:
    """USD a month for ``ticks`` ticks, each one invocation of ``billed_ms`` (rounded up to 1 ms)."""
    gb_seconds = ticks * memory_mb / 1024 * math.ceil(billed_ms) / 1000
    reads = calls_per_tick.get("dynamodb.GetItem", 0.0)
    writes = sum(calls_per_tick.get(f"dynamodb.{operation}", 0.0) for operation in DYNAMODB_WRITES)
    parts = {
        "lambda_requests": ticks * prices.lambda_per_million_requests / 1e6,
        "lambda_duration": gb_seconds * prices.lambda_arm64_per_gb_second,
        "scheduler": ticks * TICK_PRICES["scheduler_per_million_invocations"] / 1e6,
        "xray_traces": ticks * TICK_PRICES["xray_per_million_traces_recorded"] / 1e6,
        # A strongly consistent read of an item under 4 KB is one read unit; a small write one unit.
        "dynamodb": ticks
        * (
            reads * TICK_PRICES["dynamodb_on_demand_per_million_read_units"]
            + writes * TICK_PRICES["dynamodb_on_demand_per_million_write_units"]
        )
        / 1e6,
        "logs": ticks * log_bytes_per_tick / 1e9 * TICK_PRICES["cloudwatch_logs_ingestion_per_gb"],
    }
    parts["total"] = sum(parts.values())
    return parts


# ------------------------------------------------------------------ in the ticking process


class _CountingStream(io.TextIOBase):
    """stdout that counts what the handlers print (their log lines and metrics)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.written = 0
        self.metrics: set[tuple[str, str]] = set()  # (name, its dimensions) written as EMF
        self.early_warning_bytes = 0  # of the EMF lines of the early warnings' metrics

    def write(self, text: str) -> int:
        self.written += len(text.encode())
        for line in text.splitlines():
            if line.startswith('{"_aws"'):
                self._metrics(line)
        return int(self.inner.write(text))

    def _metrics(self, line: str) -> None:
        from hyperpod_ha.early_warning.metrics import ACTIVE_METRICS, CLUSTER_METRICS, NODE_METRICS

        ours = {row[0] for row in (*ACTIVE_METRICS, *NODE_METRICS)} | set(CLUSTER_METRICS)
        blob = json.loads(line)
        for directive in blob["_aws"]["CloudWatchMetrics"]:
            for dimensions in directive["Dimensions"]:
                where = ",".join(f"{name}={blob[name]}" for name in sorted(dimensions))
                names = [metric["Name"] for metric in directive["Metrics"]]
                self.metrics.update((name, where) for name in names)
                if set(names) & ours:
                    self.early_warning_bytes += len(line.encode()) + 1

    def flush(self) -> None:
        self.inner.flush()


def run_ticks_here(ticks: int) -> dict[str, Any]:
    """Tick the healthy simulated cluster ``ticks`` times; call in a fresh interpreter."""
    counting = _CountingStream(sys.stdout)
    sys.stdout = counting
    from botocore.client import BaseClient

    from hyperpod_ha_dev.embedded import delivery
    from hyperpod_ha_dev.simulation.engine import simulated_run
    from hyperpod_ha_dev.simulation.scenarios import SCENARIOS

    calls: list[Counter[str]] = []
    in_handler: list[bool] = []
    make_api_call = vars(BaseClient)["_make_api_call"]
    invoke = vars(delivery)["invoke"]

    def counted(client: BaseClient, operation: str, params: Any) -> Any:
        if in_handler:
            name = f"{client.meta.service_model.service_name}.{operation}"
            calls[-1][name] += 1
            if _early_warning_item(params):
                calls[-1][f"early_warning.{name}"] += 1
        return make_api_call(client, operation, params)

    def handled(spec: Any, event: Any) -> Any:
        in_handler.append(True)
        try:
            return invoke(spec, event)
        finally:
            in_handler.pop()

    # Only the handler's own calls count (not the harness delivering the tick).
    setattr(BaseClient, "_make_api_call", counted)  # noqa: B010 - botocore's one call path
    setattr(delivery, "invoke", handled)  # noqa: B010 - the module global invoke_async calls
    results: list[dict[str, Any]] = []
    with simulated_run(SCENARIOS["healthy"], ROOT) as run:
        for _ in range(ticks):
            calls.append(Counter())
            logged, ours = counting.written, counting.early_warning_bytes
            started = time.perf_counter()
            outcome = run.stack.tick()
            elapsed_ms = 1000 * (time.perf_counter() - started)
            last = delivery.deliveries[-1]
            # The tick's log line carries the figures and warnings too.
            added = {key: (outcome or {}).get(key) for key in ("warnings", "figures", "warning_steps")}
            results.append(
                {
                    "outcome": (outcome or {}).get("outcome"),
                    "error": last.error,
                    "ms": elapsed_ms,
                    "log_bytes": counting.written - logged,
                    "early_warning_log_bytes": counting.early_warning_bytes - ours + len(json.dumps(added)),
                    "calls": dict(calls[-1]),
                }
            )
        executions = len(run.stack.executions())
    return {"ticks": results, "executions": executions, "metrics": sorted(map(list, counting.metrics))}


def _early_warning_item(params: Any) -> bool:
    """A state table call on the early warnings' items (``warning#``, ``status#...#warnings``)."""
    item = params.get("Item") or params.get("Key") if isinstance(params, dict) else None
    key = ((item or {}).get("pk") or {}).get("S", "")
    return isinstance(key, str) and (key.startswith("warning#") or key.endswith("#warnings"))


# ------------------------------------------------------------------ in the bench's process


def _run_in_fresh_process(ticks: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-watchdog-") as directory:
        output = Path(directory) / "ticks.json"
        done = subprocess.run(
            [sys.executable, "-m", "bench.watchdog_cost", str(ticks), str(output)],
            cwd=ROOT,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT_SECONDS,
            check=False,
        )
        if done.returncode != 0 or not output.exists():
            tail = " | ".join(done.stderr.strip().splitlines()[-3:])
            raise RuntimeError(f"the watchdog ticks failed (exit {done.returncode}): {tail}")
        loaded: dict[str, Any] = json.loads(output.read_text())
        return loaded


def cost_report(raw: Mapping[str, Any], memory_mb: int, timeout_s: int, rate_minutes: int) -> dict[str, Any]:
    ticks: Sequence[Mapping[str, Any]] = raw["ticks"]
    failed = [t for t in ticks if t.get("error") or t.get("outcome") != "verified"]
    if failed or raw["executions"]:
        return {
            "error": f"healthy ticks must be verified and start nothing: {len(failed)} were not, "
            f"{raw['executions']} executions started",
            "ticks": list(ticks),
        }
    # The first tick is the container's cold start; a month of ticks 5 minutes apart is mostly
    # cold starts too (Lambda keeps idle containers for minutes, not reliably for five).
    cold_ms = float(ticks[0]["ms"])
    warm_ms = median([float(t["ms"]) for t in ticks[1:]]) if len(ticks) > 1 else cold_ms
    calls: Counter[str] = Counter()
    for tick in ticks:
        calls.update(tick["calls"])
    per_tick = {name: count / len(ticks) for name, count in sorted(calls.items())}
    log_bytes = sum(float(t["log_bytes"]) for t in ticks) / len(ticks)
    month = ticks_per_month(rate_minutes)
    measured = price_per_month(month, memory_mb, cold_ms, per_tick, log_bytes)
    # The metrics a healthy tick writes (ReadyStandbys, the early warnings' figures) are priced
    # apart: the $1 target is the checks' own cost; with them it is ``with_metrics_usd``.
    metrics = [tuple(metric) for metric in raw.get("metrics", [])]
    metrics_usd = len(metrics) * TICK_PRICES["cloudwatch_custom_metric_per_month"]
    early = early_warning_cost(month, ticks, per_tick, metrics)
    ceiling = price_per_month(month, memory_mb, 1000.0 * timeout_s, per_tick, log_bytes)
    fastest = price_per_month(ticks_per_month(FASTEST_RATE_MINUTES), memory_mb, cold_ms, per_tick, log_bytes)
    return at_most(
        round(measured["total"], 4),
        TARGET_USD_PER_MONTH,
        note=(
            "Every tick priced as a cold one (measured in process on moto, where Session Manager "
            "answers at once: a lower bound for the probe's duration on AWS); the ceiling prices "
            "every tick at the function's Timeout. Session Manager sessions and SageMaker reads cost "
            "nothing; the custom metrics every tick writes are priced apart (custom_metrics_usd_per_month, "
            "with_metrics_usd; the early warnings' share in early_warnings). The simulated transport reads "
            "the Session document (ssm.GetDocument) where AWS would start a session."
        ),
        unit="USD per cluster-month",
        rate_minutes=rate_minutes,
        ticks_per_month=round(month),
        memory_mb=memory_mb,
        timeout_seconds=timeout_s,
        tick_ms={"cold": round(cold_ms, 1), "warm_median": round(warm_ms, 1)},
        aws_calls_per_tick=per_tick,
        log_bytes_per_tick=round(log_bytes),
        custom_metrics=len(metrics),
        custom_metrics_usd_per_month=round(metrics_usd, 2),
        with_metrics_usd=round(measured["total"] + metrics_usd, 4),
        early_warnings=early,
        executions_started=raw["executions"],
        price_per_month_usd={key: round(value, 5) for key, value in measured.items()},
        ceiling_per_month_usd={key: round(value, 5) for key, value in ceiling.items()},
        at_fastest_rate={
            "rate_minutes": FASTEST_RATE_MINUTES,
            "ticks_per_month": round(ticks_per_month(FASTEST_RATE_MINUTES)),
            "price_per_month_usd": {key: round(value, 5) for key, value in fastest.items()},
        },
        prices={
            **PRICES.to_json(),
            **{f"{key}_usd": value for key, value in TICK_PRICES.items()},
            "tick_sources": list(TICK_PRICE_SOURCES),
        },
    )


def early_warning_cost(
    month: float,
    ticks: Sequence[Mapping[str, Any]],
    per_tick: Mapping[str, float],
    metrics: Sequence[tuple[str, ...]],
) -> dict[str, Any]:
    """What the early warnings add a month: their metrics (each name and dimensions, as on the
    healthy simulated pair: two controllers, one active), their state table calls and log bytes.
    A failover adds the same names under the other controller's role for a month: ``after_failover``."""
    from hyperpod_ha.early_warning.metrics import ACTIVE_METRICS, CLUSTER_METRICS, NODE_METRICS

    ours = {row[0] for row in (*ACTIVE_METRICS, *NODE_METRICS)} | set(CLUSTER_METRICS)
    count = sum(1 for metric in metrics if metric[0] in ours)
    after_failover = count + len(ACTIVE_METRICS) + len(NODE_METRICS)  # each controller in both roles
    reads = per_tick.get("early_warning.dynamodb.GetItem", 0.0)
    writes = per_tick.get("early_warning.dynamodb.PutItem", 0.0)
    log_bytes = sum(float(t.get("early_warning_log_bytes", 0)) for t in ticks) / max(len(ticks), 1)
    parts = {
        "cloudwatch_metrics": count * TICK_PRICES["cloudwatch_custom_metric_per_month"],
        "dynamodb": month
        * (
            reads * TICK_PRICES["dynamodb_on_demand_per_million_read_units"]
            + writes * TICK_PRICES["dynamodb_on_demand_per_million_write_units"]
        )
        / 1e6,
        "logs": month * log_bytes / 1e9 * TICK_PRICES["cloudwatch_logs_ingestion_per_gb"],
    }
    per_metric = TICK_PRICES["cloudwatch_custom_metric_per_month"]
    total = sum(parts.values())
    return {
        "metrics": count,
        "metrics_after_a_failover": after_failover,
        "dynamodb_calls_per_tick": {"GetItem": reads, "PutItem": writes},
        "log_bytes_per_tick": round(log_bytes),
        "price_per_month_usd": {**{k: round(v, 5) for k, v in parts.items()}, "total": round(total, 4)},
        "after_a_failover_usd": round(total + (after_failover - count) * per_metric, 4),
    }


def measure(ticks: int = TICKS) -> dict[str, Any]:
    functions = {f.logical_id: f for f in template_functions(ROOT)}
    if FUNCTION not in functions:
        return {"skipped": f"the template has no {FUNCTION}"}
    rate = default_rate_minutes()
    function = functions[FUNCTION]
    return cost_report(_run_in_fresh_process(ticks), function.memory_mb, function.timeout_seconds, rate)


def _main(argv: Sequence[str]) -> int:
    ticks, output = argv
    Path(output).write_text(json.dumps(run_ticks_here(int(ticks)), default=str))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
