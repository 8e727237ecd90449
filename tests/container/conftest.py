"""The container tier: ``sam build``, ``sam local invoke`` and ``sam local start-lambda`` for real.

Needs a container runtime: a Docker daemon that answers, or root with Debian's docker.io
(``.ci/container-runtime install``), when this tier starts dockerd itself and stops it after.
Without one it is skipped with the reason, except under ``CI=true``, where it fails.
Everything runs against the local stand-in (``hyperpod-ha local up``), started here once.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from tests.conftest import ROOT

pytestmark = pytest.mark.container

IMAGE = "hyperpod-ha/lambda-python:3.13"
BIN = Path(sys.executable).parent
RUNTIME = ROOT / ".ci" / "container-runtime"
# How long each step took in this run (seconds), printed at the end of the session.
TIMINGS: dict[str, float] = {}


def unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"container tier under CI=true: {reason}")
    pytest.skip(reason)


def tool_environment() -> dict[str, str]:
    """SAM CLI and the CLI as a user runs them: fake credentials, Python 3.13 first on the PATH."""
    python_dir = Path(os.path.realpath(sys.executable)).parent
    environment = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    environment.update(
        {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "SAM_CLI_TELEMETRY": "0",
            "PATH": f"{python_dir}:{BIN}:{os.environ.get('PATH', '')}",
        }
    )
    return environment


def timed(name: str, command: list[str], timeout: float, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    started = time.monotonic()
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=tool_environment(),
        **kwargs,
    )
    TIMINGS[name] = round(time.monotonic() - started, 1)
    return done


def lambda_architecture() -> str:
    return "arm64" if os.uname().machine in ("aarch64", "arm64") else "x86_64"


@pytest.fixture(scope="session")
def container_runtime() -> Iterator[None]:
    if subprocess.run([RUNTIME, "status"], capture_output=True, check=False).returncode == 0:
        yield
        return
    if os.geteuid() != 0 or shutil.which("dockerd") is None:
        unavailable(
            "no Docker daemon answers, and starting one needs root and docker.io "
            "(`sudo .ci/container-runtime install`)"
        )
    started = subprocess.run([RUNTIME, "start"], capture_output=True, text=True, check=False)
    if started.returncode != 0:
        unavailable(f"dockerd did not start: {started.stderr.strip()[-500:]}")
    try:
        yield
    finally:
        subprocess.run([RUNTIME, "stop"], capture_output=True, check=False)


@pytest.fixture(scope="session")
def local_image(container_runtime: None) -> Iterator[str]:
    if (
        shutil.which("debootstrap") is None
        and subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True, check=False).returncode
    ):
        unavailable(
            "no local Lambda base image and no debootstrap to build one (.ci/container-runtime install)"
        )
    done = timed("make local-image", [str(ROOT / "images/lambda-python/build.sh"), sys.executable], 1800)
    assert done.returncode == 0, done.stdout + done.stderr
    yield IMAGE
    # sam local builds an image with the layer at every invoke; the ones replaced are left
    # untagged. Only those made from our base image (they inherit its label) are removed.
    subprocess.run(
        ["docker", "image", "prune", "--force", "--filter", "label=hyperpod-ha.recipe"],
        capture_output=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory, container_runtime: None) -> Path:
    """``sam build`` for this machine's architecture, outside the checkout's .aws-sam."""
    where = tmp_path_factory.mktemp("sam")
    command = [str(BIN / "sam"), "build", "--template", str(ROOT / "template.yaml")]
    command += ["--build-dir", str(where / "build"), "--cache-dir", str(where / "cache")]
    command += ["--parameter-overrides", f"FunctionArchitecture={lambda_architecture()}"]
    done = timed("sam build", command, 900, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return where / "build"


def running(pid: int) -> bool:
    """Alive, not a zombie: a stand-in outlives `local up`, so init reaps it (if it does)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class StandIn:
    summary: dict[str, Any]
    env_vars: Path
    lambda_port: int

    def client(self, service: str) -> Any:
        return boto3.client(  # type: ignore[call-overload]
            service, endpoint_url=self.summary["endpoint"], region_name="us-east-1"
        )


@pytest.fixture(scope="session")
def stand_in(tmp_path_factory: pytest.TempPathFactory, container_runtime: None) -> Iterator[StandIn]:
    state = tmp_path_factory.mktemp("local")
    os.environ["HYPERPOD_HA_LOCAL_DIR"] = str(state)  # not beside a developer's own stand-in
    env_vars = state / "env.json"
    lambda_port = free_port()
    command = [str(BIN / "hyperpod-ha"), "local", "up", "--env-vars", str(env_vars)]
    command += ["--lambda-endpoint", f"http://127.0.0.1:{lambda_port}"]
    up = timed("hyperpod-ha local up", command, 300, cwd=ROOT)
    assert up.returncode == 0, up.stderr[-3000:]
    summary = json.loads(up.stdout)
    try:
        yield StandIn(summary, env_vars, lambda_port)
    finally:
        down = timed("hyperpod-ha local down", [str(BIN / "hyperpod-ha"), "local", "down"], 120, cwd=ROOT)
        os.environ.pop("HYPERPOD_HA_LOCAL_DIR", None)
        assert down.returncode == 0, down.stderr
        # Down leaves nothing: no process, no state, log or env-vars file, no listening server.
        assert not running(int(summary["pid"]))
        assert sorted(p.name for p in state.glob(".hyperpod-ha-local.*")) == []
        assert not env_vars.exists()
        with socket.socket() as probe:
            port = int(summary["endpoint"].rsplit(":", 1)[1])
            assert probe.connect_ex(("127.0.0.1", port)) != 0


def sam_local_options(built: Path, stand_in: StandIn, image: str) -> list[str]:
    return [
        "--template",
        str(built / "template.yaml"),
        "--env-vars",
        str(stand_in.env_vars),
        "--invoke-image",
        image,
        "--skip-pull-image",
        "--parameter-overrides",
        stand_in.summary["parameter_overrides"],
    ]


@dataclass(frozen=True)
class StartLambda:
    client: Any
    log: Path


@pytest.fixture(scope="session")
def start_lambda(
    built: Path, stand_in: StandIn, local_image: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[StartLambda]:
    """``sam local start-lambda`` where the stand-in sends its state machine's invocations."""
    log = tmp_path_factory.mktemp("start-lambda") / "sam.log"
    command = [str(BIN / "sam"), "local", "start-lambda", "--port", str(stand_in.lambda_port)]
    command += [*sam_local_options(built, stand_in, local_image), "--warm-containers", "LAZY"]
    with log.open("w") as output:
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, env=tool_environment(), start_new_session=True
        )
    try:
        deadline = time.monotonic() + 120
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", stand_in.lambda_port)) == 0:
                    break
            assert process.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "sam local start-lambda did not listen within 120 s"
            time.sleep(0.5)
        client = boto3.client(
            "lambda",
            endpoint_url=f"http://127.0.0.1:{stand_in.lambda_port}",
            region_name="us-east-1",
            config=Config(read_timeout=600, retries={"max_attempts": 0}),
        )
        yield StartLambda(client, log)
    finally:
        # SIGINT: SAM CLI stops and removes its warm containers, as on Ctrl-C (slow on vfs).
        process.send_signal(signal.SIGINT)
        try:
            process.wait(300)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TIMINGS:
        terminalreporter.write_line(f"container tier timings (s): {json.dumps(TIMINGS)}")
