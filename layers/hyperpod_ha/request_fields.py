"""Reading the fields of a request a function is given: a text field and a cluster's name. The
caller names its own error (an :class:`~hyperpod_ha.errors.InputRejected`), so each feature
keeps the error its callers match on."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, TypeGuard

from hyperpod_ha.errors import InputRejected

# SageMaker's ClusterName pattern (the template's ClusterName parameter has the same).
_CLUSTER_NAME: Final = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}")


def is_cluster_name(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and _CLUSTER_NAME.fullmatch(value) is not None


def text_field(
    request: Mapping[str, Any], name: str, rejected: type[InputRejected], *, required: bool = True
) -> str:
    """``request[name]`` stripped; ``""`` when it is absent or empty and not ``required``."""
    value = request.get(name)
    if value is None or value == "":
        if required:
            raise rejected(f"{name} is required")
        return ""
    if not isinstance(value, str):
        raise rejected(f"{name} must be a string")
    return value.strip()
