"""Reading the fields of a request a function is given: a text field, an id, a cluster's name,
and the bounds every field from outside keeps. The caller names its own error (an
:class:`~hyperpod_ha.errors.InputRejected`), so each feature keeps the error its callers match on.

The bounds (docs/security.md, "Bounds of outside input"): an id (an SNS MessageId, an event id, a tick
id, an execution ARN) is at most :data:`MAX_ID_CHARS` characters, else the input is refused;
free text (a reason, a description, a failure message) is cut to :data:`MAX_TEXT_CHARS`
characters, marked as cut. So no run input, state-table item, SNS message or SQS body made from
outside input can exceed its service's limit (256 KiB, 400 KB, 256 KB, 256 KiB)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, TypeGuard

from hyperpod_ha.errors import InputRejected

# SageMaker's ClusterName pattern (the template's ClusterName parameter has the same).
_CLUSTER_NAME: Final = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}")


# Ids from AWS are UUIDs or ARNs (an execution ARN is at most about 200 characters).
MAX_ID_CHARS: Final = 256
# Enough for any message HyperPod or an operator writes; a run input holds a few of these.
MAX_TEXT_CHARS: Final = 2048
CUT_MARK: Final = " [cut by hyperpod-ha]"


def bounded_text(value: str, limit: int = MAX_TEXT_CHARS) -> str:
    """``value`` whole when it is at most ``limit`` characters, else its start and :data:`CUT_MARK`
    (``limit`` characters in all)."""
    if len(value) <= limit:
        return value
    return value[: limit - len(CUT_MARK)] + CUT_MARK


def bounded_id(value: str, name: str, rejected: type[InputRejected]) -> str:
    """``value`` when it is at most :data:`MAX_ID_CHARS` characters; ``rejected`` otherwise."""
    if len(value) > MAX_ID_CHARS:
        raise rejected(f"{name} is longer than {MAX_ID_CHARS} characters")
    return value


def is_cluster_name(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and _CLUSTER_NAME.fullmatch(value) is not None


def text_field(
    request: Mapping[str, Any],
    name: str,
    rejected: type[InputRejected],
    *,
    required: bool = True,
    limit: int = MAX_TEXT_CHARS,
) -> str:
    """``request[name]`` stripped and cut to ``limit`` characters (:func:`bounded_text`); ``""``
    when it is absent or empty and not ``required``."""
    value = request.get(name)
    if value is None or value == "":
        if required:
            raise rejected(f"{name} is required")
        return ""
    if not isinstance(value, str):
        raise rejected(f"{name} must be a string")
    return bounded_text(value.strip(), limit)
