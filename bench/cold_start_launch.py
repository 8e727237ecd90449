"""Fresh interpreters set up the way the python3.13 runtime starts a function:
``sys.path`` is the function's built code (``/var/task``), then the built layer's ``python``
directory (``/opt/python``), then what the runtime itself provides (boto3 and its
dependencies only, linked from this virtualenv), then the standard library. ``-I -S`` keeps
the virtualenv's other packages (moto, a second Powertools, the editable ``hyperpod_ha``) out
of reach, so a module missing from the layer fails here as it would in Lambda. ``-B`` keeps
the build directory free of bytecode: Lambda's ``/opt`` is read-only, so a layer shipped
without ``.pyc`` files is compiled at every cold start, and that is what is measured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import util as importlib_util
from pathlib import Path
from typing import Final

from bench import BUILD_DIR, REGION, ROOT
from bench.lambda_functions import LambdaFunction
from hyperpod_ha.errors import HyperpodHaError

CHILD_TIMEOUT_SECONDS: Final = 60.0
# What the python3.13 Lambda runtime brings: boto3 and the packages boto3 needs.
RUNTIME_PACKAGES: Final = ("boto3", "botocore", "s3transfer", "jmespath", "urllib3", "dateutil", "six")
BASELINE: Final = "boto3 only"

# Runs in the fresh interpreter. The paths arrive as argv[1] (os.pathsep-joined); the clock
# starts before they are put on sys.path, so both sides pay the same bookkeeping.
CHILD: Final = """
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


class ColdStartError(HyperpodHaError, RuntimeError):
    """A fresh process could not import what it was asked to (the reason is its stderr tail)."""


@dataclass(frozen=True)
class Launch:
    """How to start one fresh interpreter: its sys.path head, module, cwd and environment."""

    name: str
    paths: tuple[Path, ...]
    module: str
    attribute: str
    cwd: Path
    environment: Mapping[str, str]


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


def _child_command(launch: Launch, *flags: str) -> list[str]:
    paths = os.pathsep.join(str(path) for path in launch.paths)
    return [
        sys.executable,
        "-I",
        "-S",
        "-B",
        *flags,
        "-c",
        CHILD,
        paths,
        launch.module,
        launch.attribute,
        os.pathsep,
    ]


def run_child(launch: Launch, *flags: str) -> subprocess.CompletedProcess[str]:
    """One fresh interpreter of ``launch`` (with interpreter ``flags``), its output captured."""
    return subprocess.run(
        _child_command(launch, *flags),
        cwd=launch.cwd,
        env=dict(launch.environment),
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_SECONDS,
        check=False,
    )


def run_once(launch: Launch) -> tuple[float, float, dict[str, str | None]]:
    """One fresh process: (wall ms, in-process import ms, where the watched packages came from)."""
    started = time.perf_counter()
    done = run_child(launch)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise ColdStartError(f"{launch.name}: the import failed: {tail}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return wall * 1000, float(report["import_seconds"]) * 1000, report["origins"]
