"""The local stand-in of the stack for ``sam local`` (``hyperpod-ha local up``): one process.

A moto server (``ThreadedMotoServer``) on 127.0.0.1 and, when Docker's default bridge exists, on
its gateway address too (where containers reach this machine; same port, same backends). On
it, as the embedded stack does: the site (the HyperPod cluster, the failover topic, the secret,
the file system) and the stack from template.yaml. Differences from the embedded stack:

- Boto3 in this process talks to the server over HTTP (no ``mock_aws``), so what a container
  sees is what the stack was created with.
- Health checks use the real ``session-manager`` transport: StartSession is answered here and
  its data channel served by :class:`~hyperpod_ha_dev.simulation.session_agent.SessionAgent`,
  which runs the probe on the scenario's simulated controllers.
- With ``lambda_endpoint`` (``sam local start-lambda``), the state machine's Lambda invocations
  go there instead of to the handlers in this process.

It writes ``state_path`` (endpoints, names, pid) once ready and runs until SIGTERM.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import platform
import signal
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hyperpod_ha.commands import TargetUnreachable
from hyperpod_ha_dev.embedded import delivery
from hyperpod_ha_dev.embedded.account import CREDENTIALS
from hyperpod_ha_dev.embedded.function_spec import parameter_text
from hyperpod_ha_dev.embedded.patching import Patch, applied
from hyperpod_ha_dev.embedded.site import MOTO_CONFIG, create_site
from hyperpod_ha_dev.embedded.stack import EmbeddedStack, create_stack

SESSION_DEADLINE_SECONDS = 60.0


def container_gateway() -> str | None:
    """The address of Docker's default bridge on this machine, if Docker answers."""
    try:
        answer = subprocess.run(
            ["docker", "network", "inspect", "bridge", "--format", "{{json .IPAM.Config}}"],
            capture_output=True,
            text=True,
            timeout=15,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if answer.returncode != 0:
        return None
    for config in json.loads(answer.stdout or "[]") or []:
        if config.get("Gateway"):
            return str(config["Gateway"])
        if config.get("Subnet"):  # the default bridge's gateway is its subnet's first address
            return str(next(ipaddress.ip_network(config["Subnet"]).hosts()))
    return None


def lambda_architecture() -> str:
    return "arm64" if platform.machine() in ("aarch64", "arm64") else "x86_64"


def serve(root: Path, state_path: Path, scenario_name: str, lambda_endpoint: str | None, port: int) -> None:
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer

    from hyperpod_ha_dev.simulation.engine import RUN_PARAMETERS, SITE_CONTROLLERS, cluster_for
    from hyperpod_ha_dev.simulation.scenarios import SCENARIOS
    from hyperpod_ha_dev.simulation.session_agent import SessionAgent

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    servers = [ThreadedMotoServer("127.0.0.1", port, verbose=False)]
    servers[0].start()
    port = servers[0].get_host_and_port()[1]
    gateway = container_gateway()
    if gateway:
        servers.append(ThreadedMotoServer(gateway, port, verbose=False))
        servers[-1].start()
    endpoint = f"http://127.0.0.1:{port}"
    container_endpoint = f"http://{gateway or '127.0.0.1'}:{port}"
    os.environ.update(CREDENTIALS)
    os.environ["AWS_ENDPOINT_URL"] = endpoint
    # moto's interpreter calls its service integrations (Lambda, DynamoDB) on localhost:MOTO_PORT.
    os.environ["MOTO_PORT"] = str(port)
    os.environ.pop("AWS_PROFILE", None)
    _configure_moto(endpoint)

    cluster = cluster_for(SCENARIOS[scenario_name], root)
    agent = SessionAgent(gateway or "127.0.0.1", cluster.run)
    agent.start()
    try:
        with _patched(agent, lambda_endpoint):
            site = create_site(controllers=SITE_CONTROLLERS)
            site.extra_parameters.update(
                {
                    **RUN_PARAMETERS,
                    "FunctionArchitecture": lambda_architecture(),
                    "LocalEndpointUrl": container_endpoint,
                }
            )
            stack = create_stack(root, site.stack_parameters())
            _write_state(state_path, stack, endpoint, container_endpoint, scenario_name, lambda_endpoint)
            stop.wait()
            stack.stop_running_executions()
    finally:
        agent.close()
        cluster.close()
        for server in reversed(servers):
            server.stop()


def _configure_moto(endpoint: str) -> None:
    """Run state machines for real; Lambda without Docker (the handlers answer in process)."""
    body = json.dumps({"stepfunctions": MOTO_CONFIG["stepfunctions"], "lambda": MOTO_CONFIG["lambda"]})
    request = urllib.request.Request(  # noqa: S310 (our own server on 127.0.0.1)
        f"{endpoint}/moto-api/config", data=body.encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
        answer.read()


@contextlib.contextmanager
def _patched(agent: Any, lambda_endpoint: str | None) -> Iterator[None]:
    patches = [*_session_patches(agent)]
    if lambda_endpoint:
        patches.append(_forward_lambda(lambda_endpoint))
    # delivery first: the forwarding patch of Lambda invoke, when given, replaces its routing.
    with delivery.patched(), applied(patches):
        yield


def _session_patches(agent: Any) -> list[Patch]:
    from moto.core.exceptions import JsonRESTError
    from moto.ssm.responses import SimpleSystemManagerResponse

    def start_session(self: Any) -> str:
        params = json.loads(self.body)
        try:
            session = agent.open(
                params["Target"],
                params.get("DocumentName", "SSM-SessionManagerRunShell"),
                params.get("Parameters", {}),
                SESSION_DEADLINE_SECONDS,
            )
        except TargetUnreachable as error:
            raise JsonRESTError("TargetNotConnected", error.reason) from error
        return json.dumps(
            {"SessionId": session.session_id, "TokenValue": session.token, "StreamUrl": session.stream_url}
        )

    def terminate_session(self: Any) -> str:
        session_id = json.loads(self.body)["SessionId"]
        agent.terminate(session_id)
        return json.dumps({"SessionId": session_id})

    return [
        (SimpleSystemManagerResponse, "start_session", start_session),
        (SimpleSystemManagerResponse, "terminate_session", terminate_session),
    ]


def _forward_lambda(lambda_endpoint: str) -> Patch:
    """Lambda invocations to ``sam local start-lambda`` (by logical id, as it names functions)."""
    import boto3
    from botocore.config import Config
    from moto.awslambda_simple.models import LambdaSimpleBackend

    client = boto3.client(
        "lambda",
        endpoint_url=lambda_endpoint,
        config=Config(read_timeout=900, retries={"max_attempts": 1}),
    )

    def forwarded(
        self: Any, function_name: str, qualifier: str | None, body: Any, headers: Any, response_headers: Any
    ) -> bytes:
        spec = delivery.function_for(function_name)
        if spec is None:
            raise ValueError(f"{function_name} is not a function of the stand-in's stack")
        answer = client.invoke(FunctionName=spec.logical_id, Payload=body or b"{}")
        if answer.get("FunctionError"):
            response_headers["x-amz-function-error"] = answer["FunctionError"]
        payload: bytes = answer["Payload"].read()
        return payload

    return (LambdaSimpleBackend, "invoke", forwarded)


def _write_state(
    path: Path,
    stack: EmbeddedStack,
    endpoint: str,
    container_endpoint: str,
    scenario: str,
    lambda_endpoint: str | None,
) -> None:
    state = {
        "pid": os.getpid(),
        "endpoint": endpoint,
        "container_endpoint": container_endpoint,
        "scenario": scenario,
        "lambda_endpoint": lambda_endpoint,
        "parameters": {key: parameter_text(value) for key, value in stack.parameters.items()},
        "outputs": {key: parameter_text(value) for key, value in stack.outputs.items()},
        "environment": {logical_id: dict(spec.environment) for logical_id, spec in stack.functions.items()},
    }
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(state, indent=2))
    temporary.replace(path)  # whoever waits for the file sees all of it or nothing
