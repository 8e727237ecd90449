"""A translated ``AWS::Lambda::Function``, resolved, as :class:`FunctionSpec` (what runs it)."""

from __future__ import annotations

import functools
import io
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hyperpod_ha_dev.cfn import Resolver
from hyperpod_ha_dev.embedded.functions import FunctionSpec
from hyperpod_ha_dev.embedded.sam import local_code

# The properties that say how a function runs (the rest is who may do what, and where it logs).
RUN_PROPERTIES = (
    "Code",
    "Handler",
    "Environment",
    "Timeout",
    "MemorySize",
    "DeadLetterConfig",
    "TracingConfig",
)


def function_spec(
    root: Path, logical_id: str, name: str, arn: str, properties: Mapping[str, Any], max_retries: int = 2
) -> FunctionSpec:
    """The function of these resolved properties (Lambda's defaults where they say nothing)."""
    variables = properties.get("Environment", {}).get("Variables", {})
    return FunctionSpec(
        logical_id=logical_id,
        name=name,
        arn=arn,
        code_dir=local_code(root, properties["Code"]).resolve(),
        handler=properties["Handler"],
        environment={key: parameter_text(value) for key, value in variables.items()},
        timeout=int(properties.get("Timeout", 3)),
        memory=int(properties.get("MemorySize", 128)),
        max_retries=max_retries,
        dead_letter_queue_arn=properties.get("DeadLetterConfig", {}).get("TargetArn"),
    )


def run_properties(template: Mapping[str, Any], resolver: Resolver, logical_id: str) -> dict[str, Any]:
    """A translated function's :data:`RUN_PROPERTIES`, resolved (outside moto: a deployed stack)."""
    properties = template["Resources"][logical_id]["Properties"]
    return {key: resolver.resolve(properties[key]) for key in RUN_PROPERTIES if key in properties}


def parameter_text(value: Any) -> str:
    """A value as CloudFormation passes it where only text goes (a parameter, a variable)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(item) for item in value)
    return str(value)


def zip_sources(directory: Path) -> bytes:
    """The ``*.py`` files under ``directory``, zipped; made again only when one of them changed."""
    sources = []
    for path in sorted(directory.rglob("*.py")):
        status = path.stat()
        sources.append((path, status.st_mtime_ns, status.st_size))
    return _zipped(directory, tuple(sources))


@functools.lru_cache(maxsize=32)
def _zipped(directory: Path, sources: tuple[tuple[Path, int, int], ...]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, _, _ in sources:
            archive.write(path, path.relative_to(directory))
    return buffer.getvalue()
