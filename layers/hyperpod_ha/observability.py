"""Logger, tracer and metrics in one place, so every handler is set up the same way.

Powertools reads its settings (service name, log level, metrics namespace) from the
environment the template gives each function.
"""

from __future__ import annotations

import os

from aws_lambda_powertools import Logger, Metrics, Tracer

logger = Logger()
# Only the AWS SDK calls are traced: patching every library X-Ray knows imports them all.
tracer = Tracer(patch_modules=("botocore",))
# The template sets the namespace; a process that imports this before any function's
# environment is set (the CLI, the lab) gets the same one.
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "HyperPodHA")
