"""Running a template function's real handler in process, as Lambda would.

Each invocation gets the function's own environment (the template's, references resolved)
and a Lambda context. Invocations are serialised: environment variables are process-wide,
and moto's Step Functions interpreter calls handlers from its own threads.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib.util
import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

Handler = Callable[[Any, Any], Any]

_invocation_lock = threading.RLock()
_modules: dict[Path, ModuleType] = {}
# The function whose handler runs in this context (its AWS calls are its role's: tests/iam).
invoking: contextvars.ContextVar[FunctionSpec | None] = contextvars.ContextVar("invoking", default=None)


def new_containers() -> None:
    """Forget every loaded handler: the next invocation of each is a cold start again.

    Handlers cache their clients and settings per container, as they should; a new embedded
    stack (new table names, new file system) must not see the previous stack's.
    """
    with _invocation_lock:
        _modules.clear()


@dataclass(frozen=True)
class FunctionSpec:
    """One ``AWS::Serverless::Function`` of the template, resolved."""

    logical_id: str
    name: str
    arn: str
    code_dir: Path
    handler: str
    environment: Mapping[str, str]
    timeout: int
    memory: int
    max_retries: int = 2
    dead_letter_queue_arn: str | None = None


@dataclass
class LambdaContext:
    function_name: str
    invoked_function_arn: str
    memory_limit_in_mb: int
    timeout_seconds: int
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    log_group_name: str = ""
    log_stream_name: str = ""
    _started: float = field(default_factory=time.monotonic)

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.timeout_seconds - (time.monotonic() - self._started)) * 1000))


class FunctionError(Exception):
    """A handler raised; carries what Lambda would report (errorType, errorMessage)."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(f"{error_type}: {message}")
        self.error_type = error_type
        self.error_message = message

    def payload(self) -> dict[str, str]:
        return {"errorType": self.error_type, "errorMessage": self.error_message}


def load_handler(spec: FunctionSpec) -> Handler:
    module_file, _, attribute = spec.handler.rpartition(".")
    path = (spec.code_dir / f"{module_file.replace('.', '/')}.py").resolve()
    module = _modules.get(path)
    if module is None:
        name = f"hyperpod_ha_functions.{spec.code_dir.name}.{module_file}"
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise FileNotFoundError(f"handler module {path} of {spec.logical_id} not found")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module
        with _environment(spec):
            loader_spec.loader.exec_module(module)
        _modules[path] = module
    handler: Handler = getattr(module, attribute)
    return handler


@contextlib.contextmanager
def _environment(spec: FunctionSpec) -> Iterator[None]:
    lambda_variables = {
        "AWS_LAMBDA_FUNCTION_NAME": spec.name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory),
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "_HANDLER": spec.handler,
    }
    with _invocation_lock, _variables({**spec.environment, **lambda_variables}):
        yield


@contextlib.contextmanager
def _variables(variables: Mapping[str, str]) -> Iterator[None]:
    """Set, then restore, variable by variable. Not ``mock.patch.dict``: it restores by
    clearing ``os.environ`` first, and a test's thread creating a client in that instant
    finds no region (seen under load as NoRegionError)."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def invoke(spec: FunctionSpec, event: Any) -> Any:
    """Call the handler with a JSON round trip of the event, as Lambda does; raise FunctionError."""
    try:
        handler = load_handler(spec)
    except (ImportError, FileNotFoundError, SyntaxError, AttributeError) as error:
        raise FunctionError("Runtime.ImportModuleError", f"{spec.logical_id}: {error}") from error
    payload = json.loads(json.dumps(event))
    context = LambdaContext(spec.name, spec.arn, spec.memory, spec.timeout)
    with _environment(spec):
        token = invoking.set(spec)
        try:
            result = handler(payload, context)
        except Exception as error:
            raise FunctionError(type(error).__name__, str(error)) from error
        finally:
            invoking.reset(token)
    try:
        return json.loads(json.dumps(result))
    except TypeError as error:
        raise FunctionError("Runtime.MarshalError", f"the handler's result is not JSON: {error}") from error
