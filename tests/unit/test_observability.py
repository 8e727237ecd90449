"""The tracer is made on the first traced invocation: the X-Ray SDK stays out of INIT."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from hyperpod_ha.observability import LazyTracer
from hyperpod_ha_dev.embedded.functions import LambdaContext


def test_importing_observability_leaves_the_xray_sdk_out() -> None:
    code = "import sys, hyperpod_ha.observability; print('aws_xray_sdk' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_the_tracer_is_made_once_on_the_first_traced_invocation() -> None:
    tracer = LazyTracer(patch_modules=("botocore",))
    seen: list[Any] = []

    @tracer.capture_lambda_handler
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        seen.append(event)
        return {"echo": event}

    context = LambdaContext("f", "arn:aws:lambda:us-east-1:123456789012:function:f", 128, 3)
    assert handler.__name__ == "handler"
    assert vars(tracer)["_tracer"] is None
    assert handler({"n": 1}, context) == {"echo": {"n": 1}}
    made = tracer.tracer
    assert handler({"n": 2}, context) == {"echo": {"n": 2}}
    assert tracer.tracer is made
    assert seen == [{"n": 1}, {"n": 2}]
