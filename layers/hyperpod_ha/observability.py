"""Logger, tracer and metrics in one place, so every handler is set up the same way.

Powertools reads its settings (service name, log level, metrics namespace) from the
environment the template gives each function.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

from hyperpod_ha.redaction import redact

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

Handler = TypeVar("Handler", bound=Callable[..., Any])


class LazyTracer:
    """Powertools' Tracer, made on the first traced invocation instead of at import.

    Making a Tracer imports the X-Ray SDK (its recorder pulls in asyncio and wrapt, and builds
    an X-Ray client for sampling rules, which Lambda's own sampling never uses): about a third
    of a handler's import beyond boto3. Deferred, the function's INIT stays close to boto3's;
    the first invocation pays for the SDK once, the later ones nothing, and every Tracer
    feature (handler segment, ColdStart annotation, botocore subsegments) is kept.
    """

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._tracer: Tracer | None = None
        self._lock = threading.Lock()

    @property
    def tracer(self) -> Tracer:
        with self._lock:
            if self._tracer is None:
                from aws_lambda_powertools import Tracer

                self._tracer = Tracer(**self._options)
            return self._tracer

    def capture_lambda_handler(self, handler: Handler) -> Handler:
        traced: list[Callable[..., Any]] = []

        @functools.wraps(handler)
        def run(event: Any, context: Any) -> Any:
            if not traced:
                traced.append(self.tracer.capture_lambda_handler(handler))
            return traced[0](event, context)

        return run  # type: ignore[return-value]


class RedactingFormatter(LambdaPowertoolsFormatter):
    """Powertools' JSON log lines, each through the one redaction path: a reason, an excerpt of
    node output or an exception's text passed in ``extra=`` does not reach CloudWatch whole."""

    def serialize(self, log: Mapping[str, Any]) -> str:
        return super().serialize(redact(log))


logger = Logger(logger_formatter=RedactingFormatter())
# Only the AWS SDK calls are traced: patching every library X-Ray knows imports them all.
tracer = LazyTracer(patch_modules=("botocore",))
# The template sets the namespace; a process that imports this before any function's
# environment is set (the CLI, the lab) gets the same one.
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "HyperPodHA")
