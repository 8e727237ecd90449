"""A template function resolved: what runs it, and the zip of its code."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hyperpod_ha_dev.embedded.cfn import (
    Resolver,
    with_function_globals,
)
from hyperpod_ha_dev.embedded.functions import FunctionSpec


def function_spec(
    root: Path, template: Mapping[str, Any], resolver: Resolver, logical_id: str, name: str, arn: str
) -> tuple[FunctionSpec, dict[str, Any]]:
    """A template function resolved: its spec (what runs it) and its properties (with Globals)."""
    properties = template["Resources"][logical_id].get("Properties", {})
    props: dict[str, Any] = resolver.resolve(with_function_globals(template, properties))
    environment = {
        key: parameter_text(value) for key, value in props.get("Environment", {}).get("Variables", {}).items()
    }
    spec = FunctionSpec(
        logical_id=logical_id,
        name=name,
        arn=arn,
        code_dir=(root / props["CodeUri"]).resolve(),
        handler=props["Handler"],
        environment=environment,
        timeout=int(props.get("Timeout", 3)),
        memory=int(props.get("MemorySize", 128)),
        max_retries=int(props.get("EventInvokeConfig", {}).get("MaximumRetryAttempts", 2)),
        dead_letter_queue_arn=props.get("DeadLetterQueue", {}).get("TargetArn"),
    )
    return spec, props


def parameter_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(item) for item in value)
    return str(value)


def zip_sources(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(directory.rglob("*.py")):
            archive.write(path, path.relative_to(directory))
    return buffer.getvalue()
