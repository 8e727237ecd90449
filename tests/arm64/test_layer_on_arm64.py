"""The Lambda layer built for arm64, loaded by an arm64 Python 3.13 (qemu-user), as Lambda's
arm64 runtime would: every module and handler imported, a handler run, and the session client's
unit tests run on it (``make test-arm64``; in ``make test`` as root).

The arm64 root (Debian trixie's Python 3.13, the runtime's version) is made by
``tests/arm64/arm64_root.sh`` and kept between runs; the layer is built by ``layers/Makefile`` as
``make build`` builds it (``sam build`` runs the same target)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, load_function_module

pytestmark = pytest.mark.arm64

ARM64_ROOT = Path(os.environ.get("HYPERPOD_HA_ARM64_ROOT", "/var/cache/hyperpod-ha/arm64-trixie"))
QEMU = shutil.which("qemu-aarch64-static")
WHEELS = ["--platform", "manylinux2014_aarch64", "--implementation", "cp", "--python-version", "3.13"]
# What the python3.13 runtime provides beside the layer (the layer leaves it out).
RUNTIME = ["boto3", "botocore", "s3transfer", "jmespath", "python-dateutil", "six", "urllib3"]
# What the session client's unit tests need beyond the layer and the runtime.
TEST_TOOLS = ["pytest", "hypothesis", "moto"]
# The session client's tests that run its compiled parts (websockets', cryptography's) and its
# frames: the fake agents', Run Command's and the transports' tests are pure Python, the same on
# every machine, and took most of the tier's half hour under emulation.
SESSION_CLIENT_TESTS = [
    f"tests/unit/commands/{name}.py"
    for name in ("test_frames", "test_session_encryption", "test_session_manager", "test_session_outgoing")
]
BOUND = 1800  # seconds: no step of this tier waits longer (qemu is slow on a loaded machine)


def _pip(target: Path, packages: list[str]) -> None:
    """arm64 wheels of ``packages`` at the versions the suite runs on, compiled here for 3.13 as the
    layer is (emulated Python would compile them at every start)."""
    pins = [f"{name}=={metadata.version(name)}" for name in packages]
    install = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-compile",
    ]
    subprocess.run(
        [*install, "--target", str(target), *WHEELS, "--only-binary=:all:", *pins], check=True, timeout=BOUND
    )
    compile_all = [
        sys.executable,
        "-m",
        "compileall",
        "-q",
        "--invalidation-mode",
        "unchecked-hash",
        str(target),
    ]
    subprocess.run(compile_all, check=False, capture_output=True, timeout=BOUND)


@pytest.fixture(scope="module")
def arm64(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if os.geteuid() != 0:
        pytest.skip("the arm64 root is made with debootstrap as root: sudo make test-arm64")
    if QEMU is None or shutil.which("debootstrap") is None:
        pytest.skip("qemu-user-static or debootstrap is missing: tests/arm64/arm64_root.sh --packages")
    subprocess.run(
        [str(ROOT / "tests" / "arm64" / "arm64_root.sh"), str(ARM64_ROOT)], check=True, timeout=BOUND
    )
    work = tmp_path_factory.mktemp("arm64")
    # The layer as `make build` makes it (sam build runs this target), for arm64.
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    subprocess.run(
        [
            "make",
            "-C",
            str(ROOT / "layers"),
            "build-HyperpodHaLayer",
            f"ARTIFACTS_DIR={work / 'layer'}",
            "LAYER_ARCHITECTURE=arm64",
        ],
        check=True,
        timeout=BOUND,
        env=environment,
        capture_output=True,
    )
    _pip(work / "runtime", RUNTIME)
    return {"layer": work / "layer" / "python", "runtime": work / "runtime", "work": work}


def arm64_python(paths: list[Path], *arguments: str, **environment: str) -> subprocess.CompletedProcess[str]:
    assert QEMU is not None
    return subprocess.run(
        [QEMU, "-L", str(ARM64_ROOT), str(ARM64_ROOT / "usr" / "bin" / "python3.13"), "-S", *arguments],
        cwd=ROOT,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": ":".join(map(str, paths)),
            "PYTHONDONTWRITEBYTECODE": "1",
            "LANG": "C.UTF-8",
            **environment,
        },
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
    )


def verdict_event() -> dict[str, Any]:
    from tests.functions.test_evaluate_verdict import report

    return {
        "reports": [
            report(
                "ctl1", "slurmctld_log_ctl1_primary.txt", "ping_all_up.txt", 0, "sacctmgr_cluster_ctl1.txt"
            ),
            report(
                "ctl2", "slurmctld_log_ctl2_standby.txt", "ping_all_up.txt", 0, "sacctmgr_cluster_ctl1.txt"
            ),
        ],
        "attempt": 1,
    }


def test_the_layer_imports_and_runs_a_handler_on_arm64(arm64: dict[str, Path]) -> None:
    event = arm64["work"] / "event.json"
    event.write_text(json.dumps(verdict_event()))
    environment = json.loads((ROOT / "events" / "env.json").read_text())["EvaluateVerdictFunction"]
    done = arm64_python(
        [arm64["layer"], arm64["runtime"]],
        str(ROOT / "tests" / "arm64" / "check_layer.py"),
        str(arm64["layer"]),
        str(ROOT / "functions"),
        str(event),
        AWS_DEFAULT_REGION="eu-west-1",
        **environment,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])

    assert (found["machine"], found["python"][:5]) == ("aarch64", "3.13.")
    package = ROOT / "layers" / "hyperpod_ha"
    expected = {"hyperpod_ha"} | {
        "hyperpod_ha." + ".".join(p.relative_to(package).with_suffix("").parts).removesuffix(".__init__")
        for p in package.rglob("*.py")
        if p.name != "__init__.py" or p.parent != package
    }
    assert set(found["modules"]) == expected
    assert set(found["handlers"]) == {
        path.name for path in (ROOT / "functions").iterdir() if (path / "app.py").exists()
    }
    # The compiled parts came from the layer and are arm64's: websockets' and cryptography's.
    assert any(name.startswith("websockets/") for name in found["extensions"])
    assert any(name.startswith("cryptography/") for name in found["extensions"])
    assert all("aarch64" in name or "abi3" in name for name in found["extensions"])
    # The handler answers on arm64 as it does here.
    from hyperpod_ha_dev.embedded.functions import LambdaContext

    app = load_function_module("evaluate_verdict", fresh=True)
    here = app.lambda_handler(verdict_event(), LambdaContext("EvaluateVerdictFunction", "arn:x", 128, 10))
    assert found["answer"] == json.loads(json.dumps(here))
    assert found["answer"]["verdict"] == "HEALTHY"


def test_the_session_clients_unit_tests_pass_on_arm64(arm64: dict[str, Path]) -> None:
    tools = arm64["work"] / "tools"
    _pip(tools, [*TEST_TOOLS, *RUNTIME, "cryptography"])
    done = arm64_python(
        [arm64["layer"], arm64["runtime"], tools, ROOT],
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "--hypothesis-profile=emulated",
        *SESSION_CLIENT_TESTS,
        AWS_DEFAULT_REGION="eu-west-1",
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.strip().splitlines()[-1]
    assert "failed" not in done.stdout.strip().splitlines()[-1]
