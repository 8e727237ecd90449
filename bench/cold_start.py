"""Cold start of every template function, as a ratio to a process that only imports boto3.

Each sample is a fresh interpreter started as the python3.13 runtime starts a function
(:mod:`bench.cold_start_launch`); where the time goes comes from ``-X importtime``
(:mod:`bench.import_time`).

The baseline runs the same interpreter with the same paths and Lambda variables and imports
boto3 only. Samples are interleaved round by round so both see the same machine noise; the
ratio is of the medians."""

from __future__ import annotations

import compileall
import py_compile
import random
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bench import BUILD_DIR, ROOT
from bench.cold_start_launch import (
    BASELINE,
    ColdStartError,
    Launch,
    baseline_launch,
    function_launch,
    run_once,
    runtime_site,
)
from bench.import_time import TOP_IMPORTS, importtime, top_imports
from bench.lambda_functions import layer_ids, template_functions
from bench.stats import at_most, median, median_ratio

TARGET_RATIO: Final = 1.3
ROUNDS: Final = 7
IMPORTTIME_RUNS: Final = 3
_XRAY_EXT: Final = "aws_xray_sdk.ext."


@dataclass
class Samples:
    wall_ms: list[float] = field(default_factory=list)
    import_ms: list[float] = field(default_factory=list)
    origins: dict[str, str | None] = field(default_factory=dict)


def sample(launches: Sequence[Launch], baseline: Launch, rounds: int) -> dict[str, Samples]:
    """``rounds`` interleaved rounds: the baseline twice per round, every function once, shuffled."""
    samples = {launch.name: Samples() for launch in [baseline, *launches]}
    for round_index in range(rounds):
        order = list(launches)
        random.Random(round_index).shuffle(order)
        half = len(order) // 2
        for launch in [baseline, *order[:half], baseline, *order[half:]]:
            wall, imported, origins = run_once(launch)
            samples[launch.name].wall_ms.append(wall)
            samples[launch.name].import_ms.append(imported)
            samples[launch.name].origins = origins
    return samples


def _layer_used(origins: Mapping[str, str | None], layer_paths: Sequence[Path], runtime: Path) -> bool:
    """Our package and Powertools came from the built layer, boto3 from the runtime's set."""
    layers = [str(path) for path in layer_paths]
    for name in ("hyperpod_ha", "aws_lambda_powertools"):
        origin = origins.get(name)
        if origin is not None and not any(origin.startswith(layer) for layer in layers):
            return False
    boto3 = origins.get("boto3")
    return boto3 is None or boto3.startswith(str(runtime))


@contextmanager
def compiled_copy(layer_paths: Sequence[Path]) -> Iterator[list[Path]]:
    """The layers copied and compiled to bytecode: what shipping ``.pyc`` files would give."""
    with tempfile.TemporaryDirectory(prefix="bench-layer-") as directory:
        copies = []
        for index, path in enumerate(layer_paths):
            copy = Path(directory) / f"{index}" / path.name
            shutil.copytree(path, copy)
            # Unchecked-hash bytecode: valid whatever modification times the layer's zip keeps.
            compileall.compile_dir(
                copy, quiet=2, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
            )
            copies.append(copy)
        yield copies


def measure(rounds: int = ROUNDS) -> dict[str, Any]:
    """Cold start ratios of every template function, and where the slowest one spends its time."""
    functions = template_functions(ROOT)
    layer_paths = [BUILD_DIR / layer / "python" for layer in layer_ids(ROOT)]
    missing = [str(path.relative_to(ROOT)) for path in layer_paths if not path.is_dir()]
    if missing:
        raise ColdStartError(f"layer not built: {', '.join(missing)} (run `make build`)")
    results: dict[str, Any] = {"functions": {}, "rounds": rounds, "target": TARGET_RATIO}
    with runtime_site() as runtime, tempfile.TemporaryDirectory(prefix="bench-task-") as empty:
        baseline = baseline_launch(layer_paths, runtime, Path(empty))
        launches = []
        for function in functions:
            try:
                launches.append(function_launch(function, layer_paths, runtime))
            except ColdStartError as error:
                results["functions"][function.logical_id] = {"error": str(error)}
        samples = sample(launches, baseline, rounds)
        base = samples[BASELINE]
        results["baseline"] = {
            "wall_ms_median": round(median(base.wall_ms), 1),
            "import_ms_median": round(median(base.import_ms), 1),
            "samples": len(base.wall_ms),
        }
        for launch in launches:
            taken = samples[launch.name]
            if not _layer_used(taken.origins, layer_paths, runtime):
                # Then this is not the shipped layer's cold start: no figure rather than a wrong one.
                results["functions"][launch.name] = {
                    "error": f"imports did not come from the built layer: {taken.origins}"
                }
                continue
            wall_ratio = median_ratio(taken.wall_ms, base.wall_ms)
            results["functions"][launch.name] = at_most(
                wall_ratio,
                TARGET_RATIO,
                wall_ms_median=round(median(taken.wall_ms), 1),
                import_ms_median=round(median(taken.import_ms), 1),
                import_ratio=median_ratio(taken.import_ms, base.import_ms),
                samples=len(taken.wall_ms),
            )
        measured = [launch for launch in launches if "value" in results["functions"][launch.name]]
        if measured:
            results["slowest"] = _slowest(
                measured,
                results["functions"],
                baseline=baseline,
                layer_paths=layer_paths,
                runtime=runtime,
                rounds=rounds,
            )
    _annotate(results)
    return results


def _slowest(
    launches: Sequence[Launch],
    measured: Mapping[str, Any],
    *,
    baseline: Launch,
    layer_paths: Sequence[Path],
    runtime: Path,
    rounds: int,
) -> dict[str, Any]:
    slowest = max(launches, key=lambda launch: measured[launch.name]["value"])
    runs = [importtime(slowest) for _ in range(IMPORTTIME_RUNS)]
    in_baseline = {line.module for line in importtime(baseline)}
    everything = top_imports(runs, count=100_000)
    for item in everything:
        item["in_baseline"] = item["module"] in in_baseline
    beyond = [item for item in everything if not item["in_baseline"]]
    # What-if: the same function with the layer compiled to bytecode, against the same baseline.
    with compiled_copy(layer_paths) as compiled:
        what_if = Launch(
            slowest.name + " (layer with .pyc)",
            (slowest.paths[0], *compiled, runtime),
            slowest.module,
            slowest.attribute,
            slowest.cwd,
            slowest.environment,
        )
        samples = sample([what_if], baseline, max(3, rounds // 2))
    return {
        "function": slowest.name,
        "importtime_runs": IMPORTTIME_RUNS,
        "top_imports": everything[:TOP_IMPORTS],
        "top_beyond_baseline": beyond[:TOP_IMPORTS],
        "top_self": sorted(beyond, key=lambda item: item["self_ms"], reverse=True)[:5],
        # X-Ray patches a library through aws_xray_sdk.ext.<library>.patch, importing the library.
        "xray_patched_imports": _xray_patched_imports([item["module"] for item in everything]),
        "with_compiled_layer_ratio": median_ratio(samples[what_if.name].wall_ms, samples[BASELINE].wall_ms),
    }


def _xray_patched_imports(modules: Sequence[str]) -> list[str]:
    """Libraries X-Ray's patcher imported and patched (its ext.<library>.patch module loaded)."""
    loaded = set(modules)
    patchers = {
        module.removeprefix(_XRAY_EXT).split(".")[0]
        for module in loaded
        if module.startswith(_XRAY_EXT) and module.endswith(".patch")
    }
    return sorted(library for library in patchers if library in loaded)


def _annotate(results: dict[str, Any]) -> None:
    """Say why a missed target is missed and what would fix it, from what was measured."""
    slowest = results.get("slowest")
    advice = _advice(slowest) if slowest is not None else ""
    for name, check in results["functions"].items():
        if "error" in check or check["met"]:
            continue
        check["note"] = (
            f"{name} takes {check['value']}x the time of a boto3-only process "
            f"({check['wall_ms_median']} ms against {results['baseline']['wall_ms_median']} ms). {advice}"
        ).strip()


def _advice(slowest: Mapping[str, Any]) -> str:
    heavy = ", ".join(f"{item['module']} {item['self_ms']} ms" for item in slowest["top_self"][:3])
    parts = [f"Largest own import costs in {slowest['function']}: {heavy}."]
    compiled = slowest["with_compiled_layer_ratio"]
    parts.append(
        "The layer ships no bytecode and Lambda's /opt is read-only, so every cold start compiles "
        f"it; with the layer compiled to .pyc (Python 3.13) {slowest['function']} measures {compiled}x."
    )
    modules = {item["module"] for item in slowest["top_beyond_baseline"]}
    if any(module.startswith("aws_xray_sdk") for module in modules):
        parts.append(
            "Powertools' Tracer imports aws_xray_sdk, whose recorder builds a botocore X-Ray client "
            "at import (endpoint and service-model JSON): create the Tracer lazily, or trace "
            "without the SDK (Lambda's active tracing still records each invocation)."
        )
    patched = [name for name in slowest["xray_patched_imports"] if name != "botocore"]
    if patched:
        parts.append(
            "The Tracer also patches every library X-Ray supports that it finds, importing "
            f'{", ".join(patched)} at every cold start: Tracer(patch_modules=("botocore",)) avoids it.'
        )
    return " ".join(parts)
