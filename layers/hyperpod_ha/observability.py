"""Logger, tracer and metrics in one place, so every handler is set up the same way.

Powertools reads its settings (service name, log level, metrics namespace) from the
environment the template gives each function.
"""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer

logger = Logger()
tracer = Tracer()
metrics = Metrics()
