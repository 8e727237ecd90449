"""``hyperpod-ha local up|down``: the stack's local stand-in for ``sam local`` (see ``embedded.standin``).

``up`` starts the stand-in in its own process (its own session, so the shell that ran ``up``
may go away), waits until the stack is created, writes the ``--env-vars`` file with the
stand-in's names and endpoint, and prints what ``sam local`` needs as JSON. ``down`` stops
that process and removes what ``up`` wrote. The state file in the checkout (or in
``$HYPERPOD_HA_LOCAL_DIR``) ties them together.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hyperpod_ha_dev.cli import project_root, result_stream

STATE_FILE = ".hyperpod-ha-local.json"
LOG_FILE = ".hyperpod-ha-local.log"
UP_SECONDS = 180.0
DOWN_SECONDS = 30.0


def add_parser(commands: Any) -> None:
    local = commands.add_parser("local", help="a local stand-in of the stack for sam local (moto server)")
    actions = local.add_subparsers(dest="local_command", required=True, metavar="{up,down}")
    up = actions.add_parser("up", help="start it and write the --env-vars file for sam local")
    up.add_argument("--env-vars", required=True, type=Path, help="the file to write (sam local's format)")
    up.add_argument("--scenario", default="healthy", help="what the simulated controllers show")
    up.add_argument("--port", type=int, default=0, help="the moto server's port (default: a free one)")
    up.add_argument(
        "--lambda-endpoint",
        help="send the state machine's Lambda invocations there (sam local start-lambda, e.g. "
        "http://127.0.0.1:3001) instead of to the handlers in the stand-in's process",
    )
    actions.add_parser("down", help="stop it and remove what up wrote")
    serve = actions.add_parser("serve", help=argparse.SUPPRESS)  # the stand-in process itself
    serve.add_argument("--state", required=True, type=Path)
    serve.add_argument("--scenario", required=True)
    serve.add_argument("--port", type=int, required=True)
    serve.add_argument("--lambda-endpoint")


def state_dir(root: Path) -> Path:
    return Path(os.environ.get("HYPERPOD_HA_LOCAL_DIR") or root)


def run_local(args: argparse.Namespace) -> int:
    root = project_root()
    if args.local_command == "serve":
        from hyperpod_ha_dev.embedded.standin import serve

        serve(root, args.state, args.scenario, args.lambda_endpoint, args.port)
        return 0
    if args.local_command == "up":
        return _up(root, args)
    return _down(root)


def _up(root: Path, args: argparse.Namespace) -> int:
    from hyperpod_ha_dev.simulation.scenarios import SCENARIOS

    if args.scenario not in SCENARIOS:
        print(f"hyperpod-ha: unknown scenario {args.scenario!r}; known: {sorted(SCENARIOS)}", file=sys.stderr)
        return 2
    state_path = state_dir(root) / STATE_FILE
    log_path = state_dir(root) / LOG_FILE
    running = _read_state(state_path)
    if running is not None and _is_stand_in(int(running["pid"])):
        print(f"hyperpod-ha: already up (pid {running['pid']}); run hyperpod-ha local down", file=sys.stderr)
        return 2
    state_path.unlink(missing_ok=True)
    command = [sys.executable, "-m", "hyperpod_ha_dev.cli", "local", "serve", "--state", str(state_path)]
    # --verbose: the stand-in's log file keeps the functions' logs (its tail is shown on failure).
    command += ["--scenario", args.scenario, "--port", str(args.port), "--verbose"]
    if args.lambda_endpoint:
        command += ["--lambda-endpoint", args.lambda_endpoint]
    with log_path.open("wb") as log:
        process = subprocess.Popen(  # its own session: it outlives this command
            command,
            cwd=root,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    deadline = time.monotonic() + UP_SECONDS
    while not state_path.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            if process.poll() is None:
                process.terminate()
                process.wait(DOWN_SECONDS)
            tail = log_path.read_text(errors="replace")[-2000:]
            print(f"hyperpod-ha: the stand-in did not come up:\n{tail}", file=sys.stderr)
            log_path.unlink(missing_ok=True)
            return 1
        time.sleep(0.2)
    state = json.loads(state_path.read_text())
    env_vars = args.env_vars.resolve()
    env_vars.write_text(json.dumps(state["environment"], indent=2, sort_keys=True) + "\n")
    state["env_vars"] = str(env_vars)
    state_path.write_text(json.dumps(state, indent=2))
    parameters = state["parameters"]
    summary = {
        "pid": state["pid"],
        "endpoint": state["endpoint"],
        "container_endpoint": state["container_endpoint"],
        "env_vars": str(env_vars),
        # sam local declares AWS_ENDPOINT_URL only when LocalEndpointUrl is given.
        "parameter_overrides": f"FunctionArchitecture={parameters['FunctionArchitecture']} "
        f"LocalEndpointUrl={parameters['LocalEndpointUrl']}",
        "state_machine_arn": state["outputs"].get("FailoverVerificationStateMachineArn"),
        "cluster": parameters["ClusterName"],
        "scenario": state["scenario"],
    }
    out = result_stream()
    print(json.dumps(summary, indent=2), file=out)
    out.flush()
    return 0


def _down(root: Path) -> int:
    state_path = state_dir(root) / STATE_FILE
    log_path = state_dir(root) / LOG_FILE
    state = _read_state(state_path)
    if state is None:
        print("hyperpod-ha: the local stand-in is not up", file=sys.stderr)
        log_path.unlink(missing_ok=True)
        return 0
    pid = int(state["pid"])
    if _is_stand_in(pid):
        os.kill(pid, signal.SIGTERM)
        # Until it has exited: an exiting process has no command line left to recognise it by.
        deadline = time.monotonic() + DOWN_SECONDS
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    for written in (state.get("env_vars"), str(log_path), str(state_path)):
        if written:
            Path(written).unlink(missing_ok=True)
    print(f"hyperpod-ha: the local stand-in (pid {pid}) is down", file=sys.stderr)
    return 0


def _read_state(path: Path) -> dict[str, Any] | None:
    try:
        state: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return state


def _is_stand_in(pid: int) -> bool:
    """Alive and still our process (a pid may be reused after a crash)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"serve" in cmdline and b"hyperpod_ha_dev.cli" in cmdline and _alive(pid)


def _alive(pid: int) -> bool:
    """Exists and is not a zombie (the stand-in outlives ``up``; whoever adopts it reaps it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"
