"""What ships: each function's own code zipped, and the shared layer unzipped.

The layer must not carry what the python3.13 runtime provides (boto3 and its dependencies),
its ``hyperpod_ha`` must be the runtime package's files exactly, and its compiled extensions
must be arm64 (the template's architecture).
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from bench import BUILD_DIR, ROOT
from bench.lambda_functions import layer_ids, template_functions
from bench.stats import at_most, human_bytes

FUNCTION_ZIP_TARGET: Final = 100 * 1024
LAYER_UNZIPPED_TARGET: Final = 15 * 1024 * 1024
# Top-level names the runtime provides (packages, their dist-info, plain modules).
RUNTIME_PROVIDED: Final = re.compile(
    r"^(boto3|botocore|s3transfer|jmespath|urllib3|dateutil|python_dateutil|six)([-_.].*)?$"
)
RUNTIME_PACKAGE: Final = ROOT / "layers" / "hyperpod_ha"
# Extension modules name their platform: cpython-313-aarch64-linux-gnu.so.
_EXTENSION_PLATFORM: Final = re.compile(r"\.cpython-\d+-(?P<arch>[a-z0-9_]+)-linux-gnu\.so$")


def files_under(directory: Path) -> list[Path]:
    return sorted(path for path in directory.rglob("*") if path.is_file())


def zipped_size(directory: Path) -> int:
    """Bytes of the deflated zip of ``directory``, as ``sam package`` uploads it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in files_under(directory):
            archive.write(path, path.relative_to(directory))
    return len(buffer.getvalue())


def package_files(package: Path) -> set[str]:
    """A package's files by relative path, without bytecode."""
    return {
        str(path.relative_to(package))
        for path in files_under(package)
        if "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def layer_differences(layer_package: Path, runtime_package: Path = RUNTIME_PACKAGE) -> list[str]:
    """How the layer's ``hyperpod_ha`` differs from the runtime package ('+' extra, '-' missing)."""
    shipped, runtime = package_files(layer_package), package_files(runtime_package)
    return [f"+{name}" for name in sorted(shipped - runtime)] + [
        f"-{name}" for name in sorted(runtime - shipped)
    ]


def runtime_provided(names: Iterable[str]) -> list[str]:
    return sorted(name for name in names if RUNTIME_PROVIDED.match(name))


def extension_architectures(paths: Iterable[Path]) -> dict[str, str]:
    """Compiled extension module -> its architecture tag (e.g. ``aarch64``)."""
    found = {}
    for path in paths:
        match = _EXTENSION_PLATFORM.search(path.name)
        if match is not None:
            found[path.name] = match["arch"]
        elif path.suffix == ".so":
            found[path.name] = "unknown"
    return found


def layer_report(layer: Path) -> dict[str, Any]:
    site = layer / "python"
    files = files_under(layer)
    unzipped = sum(path.stat().st_size for path in files)
    by_entry: dict[str, int] = {}
    for path in files:
        relative = path.relative_to(site) if path.is_relative_to(site) else path.relative_to(layer)
        by_entry[relative.parts[0]] = by_entry.get(relative.parts[0], 0) + path.stat().st_size
    top_level = sorted(path.name for path in site.iterdir()) if site.is_dir() else []
    provided = runtime_provided(top_level)
    differences = layer_differences(site / "hyperpod_ha")
    extensions = extension_architectures(files)
    foreign = sorted(name for name, arch in extensions.items() if arch != "aarch64")
    bytecode = sum(1 for path in files if path.suffix == ".pyc")
    notes = []
    if provided:
        notes.append(f"ships what the runtime provides: {', '.join(provided)}")
    if differences:
        notes.append(f"the layer's hyperpod_ha is not the runtime package: {' '.join(differences[:5])}")
    if foreign:
        notes.append(f"extensions not built for arm64: {', '.join(foreign)}")
    if unzipped > LAYER_UNZIPPED_TARGET:
        largest = ", ".join(f"{name} {human_bytes(size)}" for name, size in _largest(by_entry, 3))
        notes.append(f"over the size target; largest parts: {largest}")
    return at_most(
        unzipped,
        LAYER_UNZIPPED_TARGET,
        "; ".join(notes),
        unit="bytes unzipped",
        zipped_bytes=zipped_size(layer),
        files=len(files),
        bytecode_files=bytecode,
        largest=[{"entry": name, "bytes": size} for name, size in _largest(by_entry, 6)],
        boto3_excluded={
            "value": not provided,
            "target": True,
            "met": not provided,
            "runtime_provided_found": provided,
        },
        differs_from_runtime_package=differences,
        extensions=extensions,
        all_extensions_arm64=not foreign,
    )


def _largest(sizes: dict[str, int], count: int) -> list[tuple[str, int]]:
    return sorted(sizes.items(), key=lambda item: item[1], reverse=True)[:count]


def measure() -> dict[str, Any]:
    functions: dict[str, Any] = {}
    for function in template_functions(ROOT):
        built = BUILD_DIR / function.logical_id
        if not built.is_dir() or not files_under(built):
            functions[function.logical_id] = {
                "error": f"{built.relative_to(ROOT)} is not built (run `make build`)"
            }
            continue
        size = zipped_size(built)
        note = "" if size <= FUNCTION_ZIP_TARGET else "the function's own code should be a thin handler"
        functions[function.logical_id] = at_most(
            size, FUNCTION_ZIP_TARGET, note, unit="bytes zipped", files=len(files_under(built))
        )
    layers = {}
    for layer_id in layer_ids(ROOT):
        built = BUILD_DIR / layer_id
        layers[layer_id] = (
            layer_report(built) if built.is_dir() else {"error": f"{built.relative_to(ROOT)} is not built"}
        )
    return {"functions": functions, "layers": layers}
