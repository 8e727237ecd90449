"""Every AWS call a function makes while the embedded stack runs its handler, recorded.

A botocore handler on every client (``BUILTIN_HANDLERS``: registered on each new session, so on
every client the functions make, whenever they make it) records the service, the operation, its
parameters and the function whose handler is running (``hyperpod_ha_dev.embedded.functions
.invoking``, a context variable: the step's thread, asyncio's ``to_thread`` included). Calls made
by the tests themselves (no function running) are not recorded.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass
from typing import Any

import botocore.handlers

# IAM's prefix where botocore's signing name differs.
_PREFIXES = {"monitoring": "cloudwatch"}


@dataclass(frozen=True)
class Call:
    function: str  # the function's logical id
    function_name: str  # its physical name (the session name of its role)
    prefix: str  # IAM's service prefix
    operation: str
    params: dict[str, Any]
    region: str
    # What IAM authorizes (tests/iam/requests.py), made when the call is (a resource's tags then),
    # or the name of an operation the table lacks.
    requests: list[Any] | str


_calls: list[Call] = []
_lock = threading.Lock()


def _record(params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
    try:
        from hyperpod_ha_dev.embedded.functions import invoking  # imported once the stack runs
    except ImportError:  # the layer alone on the path (tests/arm64): no embedded stack, no function
        return
    spec = invoking.get()
    if spec is None:
        return
    service = model.service_model
    prefix = _PREFIXES.get(service.signing_name, service.signing_name)
    from tests.iam.requests import Unmapped, requests_for

    region = str(context.get("client_region") or "")
    try:
        requests: list[Any] | str = requests_for(prefix, model.name, params, region)
    except Unmapped as unmapped:
        requests = f"no mapping: {unmapped}"
    except Exception as error:  # never the call's failure: the evaluation reports it instead
        requests = f"the mapping failed: {type(error).__name__}: {error}"
    call = Call(spec.logical_id, spec.name, prefix, model.name, copy.deepcopy(params), region, requests)
    with _lock:
        _calls.append(call)


def install() -> None:
    """Record from now on (every botocore session created after this call)."""
    handlers = botocore.handlers.BUILTIN_HANDLERS
    if ("before-parameter-build", _record) not in handlers:
        handlers.append(("before-parameter-build", _record))
    import boto3

    if boto3.DEFAULT_SESSION is not None:  # a session made before: its future clients too
        boto3.DEFAULT_SESSION.events.register("before-parameter-build", _record, unique_id="iam-record")


def take() -> list[Call]:
    """The calls recorded since the last take."""
    with _lock:
        taken = list(_calls)
        _calls.clear()
    return taken
