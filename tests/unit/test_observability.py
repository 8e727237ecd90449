"""Every handler's logging context: the function's own service name, in process as deployed,
and no X-Ray SDK anywhere (tracing is Lambda's and Step Functions' own)."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from hyperpod_ha.observability import logger, metrics, observed
from hyperpod_ha_dev.embedded.functions import LambdaContext
from tests.conftest import ROOT


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = logger.registered_handler
    assert isinstance(handler, logging.StreamHandler)
    previous = handler.setStream(stream)
    try:
        yield stream
    finally:
        handler.setStream(previous)


def _context() -> LambdaContext:
    return LambdaContext("f", "arn:aws:lambda:us-east-1:123456789012:function:f", 128, 3)


def test_the_service_name_is_the_functions_own_at_invocation(
    log_lines: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The module's Logger was made at import, before this "function's" environment existed.
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "controller-status")

    @observed
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        logger.info("handled", extra={"n": event["n"]})
        return {"echo": event}

    assert handler({"n": 1}, _context()) == {"echo": {"n": 1}}
    [line] = [json.loads(text) for text in log_lines.getvalue().splitlines()]
    assert line["service"] == "controller-status"
    assert line["function_name"] == "f"
    assert line["n"] == 1
    assert metrics.default_dimensions["service"] == "controller-status"


def test_every_metric_carries_the_stack_s_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "hyperpod-ha")

    @observed
    def handler(event: dict[str, Any], context: Any) -> None:
        metrics.add_metric(name="Handled", unit="Count", value=1)
        emitted.append(metrics.serialize_metric_set())
        metrics.clear_metrics()

    emitted: list[dict[str, Any]] = []
    monkeypatch.setenv("CLUSTER_NAME", "ml-cluster")
    handler({}, _context())
    assert metrics.default_dimensions == {"service": "hyperpod-ha", "cluster": "ml-cluster"}
    # Another stack's function (in process, the CLI runs more than one): its own cluster only.
    monkeypatch.setenv("CLUSTER_NAME", "other")
    handler({}, _context())
    assert metrics.default_dimensions == {"service": "hyperpod-ha", "cluster": "other"}
    monkeypatch.delenv("CLUSTER_NAME")
    handler({}, _context())
    assert metrics.default_dimensions == {"service": "hyperpod-ha"}
    dimensions = [blob["_aws"]["CloudWatchMetrics"][0]["Dimensions"][0] for blob in emitted]
    assert [
        {name: blob[name] for name in names} for names, blob in zip(dimensions, emitted, strict=True)
    ] == [
        {"service": "hyperpod-ha", "cluster": "ml-cluster"},
        {"service": "hyperpod-ha", "cluster": "other"},
        {"service": "hyperpod-ha"},
    ]


def test_state_from_one_invocation_is_cleared_for_the_next(log_lines: io.StringIO) -> None:
    @observed
    def handler(event: dict[str, Any], context: Any) -> None:
        if event.get("tag"):
            logger.append_keys(tag=event["tag"])
        logger.info("handled")

    handler({"tag": "first"}, _context())
    handler({}, _context())
    first, second = (json.loads(text) for text in log_lines.getvalue().splitlines())
    assert first["tag"] == "first"
    assert "tag" not in second


def test_importing_observability_leaves_the_xray_sdk_out() -> None:
    # The layer ships no X-Ray SDK (its support ends 2027-02-25; the layer's pins carry no
    # [tracer] extra, tests/unit/test_pins.py). This environment has it only through moto[all].
    code = "import sys, hyperpod_ha.observability; print('aws_xray_sdk' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_no_handler_or_runtime_module_uses_the_powertools_tracer() -> None:
    sources = [*(ROOT / "functions").rglob("*.py"), *(ROOT / "layers" / "hyperpod_ha").rglob("*.py")]
    users = [path.relative_to(ROOT) for path in sources if "Tracer" in path.read_text()]
    assert users == []
