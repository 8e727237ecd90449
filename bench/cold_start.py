"""Cold start of every template function, as a ratio to a process that only imports boto3.

Each sample is a fresh interpreter set up the way the python3.13 runtime starts a function:
``sys.path`` is the function's built code (``/var/task``), then the built layer's ``python``
directory (``/opt/python``), then what the runtime itself provides (boto3 and its
dependencies only, linked from this virtualenv), then the standard library. ``-I -S`` keeps
the virtualenv's other packages (moto, a second Powertools, the editable ``hyperpod_ha``) out
of reach, so a module missing from the layer fails here as it would in Lambda. ``-B`` keeps
the build directory free of bytecode: Lambda's ``/opt`` is read-only, so a layer shipped
without ``.pyc`` files is compiled at every cold start, and that is what is measured.

The baseline runs the same interpreter with the same paths and Lambda variables and imports
boto3 only. Samples are interleaved round by round so both see the same machine noise; the
ratio is of the medians.
"""

from __future__ import annotations

import compileall
import json
import os
import py_compile
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import util as importlib_util
from pathlib import Path
from typing import Any, Final

from bench import BUILD_DIR, REGION, ROOT
from bench.lambda_functions import LambdaFunction, layer_ids, template_functions
from bench.stats import at_most, median, median_ratio

TARGET_RATIO: Final = 1.3
ROUNDS: Final = 7
IMPORTTIME_RUNS: Final = 3
TOP_IMPORTS: Final = 10
CHILD_TIMEOUT_SECONDS: Final = 60.0
# What the python3.13 Lambda runtime brings: boto3 and the packages boto3 needs.
RUNTIME_PACKAGES: Final = ("boto3", "botocore", "s3transfer", "jmespath", "urllib3", "dateutil", "six")
BASELINE: Final = "boto3 only"
_XRAY_EXT: Final = "aws_xray_sdk.ext."

# Runs in the fresh interpreter. The paths arrive as argv[1] (os.pathsep-joined); the clock
# starts before they are put on sys.path, so both sides pay the same bookkeeping.
_CHILD: Final = """
import sys, time
started = time.perf_counter()
sys.path[0:0] = sys.argv[1].split(sys.argv[4])
__import__(sys.argv[2])  # the import statement's path: -X importtime logs it (import_module's not)
module = sys.modules[sys.argv[2]]
if sys.argv[3]:
    getattr(module, sys.argv[3])
elapsed = time.perf_counter() - started
import json
origins = {name: getattr(sys.modules.get(name), "__file__", None)
           for name in ("hyperpod_ha", "aws_lambda_powertools", "boto3")}
print(json.dumps({"import_seconds": elapsed, "origins": origins, "modules": sorted(sys.modules)}))
"""


class ColdStartError(RuntimeError):
    """A fresh process could not import what it was asked to (the reason is its stderr tail)."""


@dataclass(frozen=True)
class ImportLine:
    """One line of ``python -X importtime``."""

    module: str
    self_us: int
    cumulative_us: int
    depth: int


_IMPORTTIME = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|( *)(\S.*)$")


def parse_importtime(stderr: str) -> list[ImportLine]:
    """The ``import time:`` lines of one run; the header and other output are skipped."""
    lines = []
    for raw in stderr.splitlines():
        match = _IMPORTTIME.match(raw)
        if match is None:
            continue
        self_us, cumulative_us, indent, module = match.groups()
        # One space after the bar, then two per nesting level.
        depth = max(0, (len(indent) - 1) // 2)
        lines.append(ImportLine(module.strip(), int(self_us), int(cumulative_us), depth))
    return lines


def top_imports(runs: Sequence[Sequence[ImportLine]], count: int = TOP_IMPORTS) -> list[dict[str, Any]]:
    """The ``count`` imports with the largest median cumulative time over ``runs``."""
    cumulative: dict[str, list[int]] = {}
    own: dict[str, list[int]] = {}
    depth: dict[str, int] = {}
    for lines in runs:
        for line in lines:
            cumulative.setdefault(line.module, []).append(line.cumulative_us)
            own.setdefault(line.module, []).append(line.self_us)
            depth.setdefault(line.module, line.depth)
    ranked = sorted(cumulative, key=lambda module: median(cumulative[module]), reverse=True)[:count]
    return [
        {
            "module": module,
            "cumulative_ms": round(median(cumulative[module]) / 1000, 1),
            "self_ms": round(median(own[module]) / 1000, 1),
            "depth": depth[module],
        }
        for module in ranked
    ]


@dataclass(frozen=True)
class Launch:
    """How to start one fresh interpreter: its sys.path head, module, cwd and environment."""

    name: str
    paths: tuple[Path, ...]
    module: str
    attribute: str
    cwd: Path
    environment: Mapping[str, str]


@dataclass
class Samples:
    wall_ms: list[float] = field(default_factory=list)
    import_ms: list[float] = field(default_factory=list)
    origins: dict[str, str | None] = field(default_factory=dict)


def lambda_environment(function_name: str, handler: str, task_root: Path, memory_mb: int) -> dict[str, str]:
    """The variables the Lambda runtime sets for every function (no credentials: nothing calls AWS)."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "en_US.UTF-8",
        "TZ": ":UTC",
        "LAMBDA_TASK_ROOT": str(task_root),
        "LAMBDA_RUNTIME_DIR": "/var/runtime",
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
        "AWS_LAMBDA_FUNCTION_NAME": function_name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(memory_mb),
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{function_name}",
        "AWS_LAMBDA_LOG_STREAM_NAME": "2026/01/01/[$LATEST]00000000000000000000000000000000",
        "_HANDLER": handler,
    }


def tracing_environment() -> dict[str, str]:
    """What Lambda adds with ``Tracing: Active`` (the X-Ray daemon's address)."""
    return {
        "AWS_XRAY_DAEMON_ADDRESS": "169.254.79.129:2000",
        "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR",
        "_AWS_XRAY_DAEMON_ADDRESS": "169.254.79.129",
        "_AWS_XRAY_DAEMON_PORT": "2000",
    }


@contextmanager
def runtime_site() -> Iterator[Path]:
    """A directory holding only what the runtime provides (links into this virtualenv)."""
    with tempfile.TemporaryDirectory(prefix="bench-runtime-") as directory:
        root = Path(directory)
        for name in RUNTIME_PACKAGES:
            spec = importlib_util.find_spec(name)
            if spec is None or spec.origin is None:
                continue
            origin = Path(spec.origin)
            source = origin.parent if origin.name == "__init__.py" else origin
            (root / source.name).symlink_to(source)
        yield root


def function_launch(function: LambdaFunction, layer_paths: Sequence[Path], runtime: Path) -> Launch:
    code_dir = BUILD_DIR / function.logical_id
    module_file = code_dir / f"{function.module.replace('.', '/')}.py"
    if not module_file.is_file():
        raise ColdStartError(f"{module_file.relative_to(ROOT)} is not built (run `make build`)")
    environment = lambda_environment(function.logical_id, function.handler, code_dir, function.memory_mb)
    if function.tracing_active:
        environment.update(tracing_environment())
    environment.update(function.environment)
    return Launch(
        name=function.logical_id,
        paths=(code_dir, *layer_paths, runtime),
        module=function.module,
        attribute=function.attribute,
        cwd=code_dir,
        environment=environment,
    )


def baseline_launch(layer_paths: Sequence[Path], runtime: Path, cwd: Path) -> Launch:
    environment = lambda_environment("Boto3OnlyFunction", "app.lambda_handler", cwd, 256)
    return Launch(BASELINE, (*layer_paths, runtime), "boto3", "", cwd, environment)


def _command(launch: Launch, *flags: str) -> list[str]:
    paths = os.pathsep.join(str(path) for path in launch.paths)
    return [
        sys.executable,
        "-I",
        "-S",
        "-B",
        *flags,
        "-c",
        _CHILD,
        paths,
        launch.module,
        launch.attribute,
        os.pathsep,
    ]


def run_once(launch: Launch) -> tuple[float, float, dict[str, str | None]]:
    """One fresh process: (wall ms, in-process import ms, where the watched packages came from)."""
    started = time.perf_counter()
    done = subprocess.run(
        _command(launch),
        cwd=launch.cwd,
        env=dict(launch.environment),
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_SECONDS,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise ColdStartError(f"{launch.name}: the import failed: {tail}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return wall * 1000, float(report["import_seconds"]) * 1000, report["origins"]


def importtime(launch: Launch) -> list[ImportLine]:
    """One ``-X importtime`` run: the imports that succeeded (failed attempts are logged too)."""
    done = subprocess.run(
        _command(launch, "-X", "importtime"),
        cwd=launch.cwd,
        env=dict(launch.environment),
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_SECONDS,
        check=False,
    )
    if done.returncode != 0:
        raise ColdStartError(f"{launch.name}: the import failed under -X importtime")
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1])["modules"])
    return [line for line in parse_importtime(done.stderr) if line.module in loaded]


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
