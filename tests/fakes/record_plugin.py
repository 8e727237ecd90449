"""Record what AWS's Session Manager client sends, frame by frame, facing the fake agent.

Run by hand through ``tools/session_manager_plugin/record.sh`` (which builds the plugin
from a checkout of ``aws/session-manager-plugin``); nothing here fetches or builds::

    python -m tests.fakes.record_plugin --plugin BINARY --out tests/fixtures/session_manager

For each scenario of :mod:`tests.fakes.session_scenarios` the plugin gets a StartSession
response naming the fake agent's local StreamUrl on its command line (as the AWS CLI
passes it) and a local stand-in for the SSM API (TerminateSession, ResumeSession). The
transcript, both directions, becomes one JSON line per websocket message (consecutive
identical copies folded into ``count``), the plugin's API calls lines of their own.
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from hyperpod_ha.commands.frames import FrameError, decode
from tests.fakes.session_scenarios import RESUME_TOKEN, SCENARIOS, SESSION_ID, TARGET, TOKEN, Scenario
from tests.fakes.ssm_agent import FakeSsmAgent, Message


def _payload(data: bytes) -> object:
    try:
        return json.loads(data)
    except (UnicodeDecodeError, ValueError):
        pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode()}


def describe(message: Message) -> dict[str, Any]:
    """One transcript message as a fixture line (``raw`` only on the client's binary frames)."""
    line: dict[str, Any] = {
        "from": message.sender,
        "connection": message.connection,
        "at_ms": round(message.at * 1000),
    }
    if isinstance(message.data, str):
        return {**line, "websocket": "text", "text": message.data}
    line["websocket"] = "binary"
    try:
        frame = decode(message.data)
    except FrameError as error:
        return {**line, "undecodable": error.reason, "raw": base64.b64encode(message.data).decode()}
    line.update(
        message_type=frame.message_type,
        flags=frame.flags,
        sequence_number=frame.sequence_number,
        payload_type=frame.payload_type,
        payload=_payload(frame.payload),
        message_id=str(frame.message_id),
        created_date=frame.created_date,
        header_length=frame.header_length,
        schema_version=frame.schema_version,
        digest_ok=frame.digest_is_valid(),
    )
    if message.sender == "client":
        line["raw"] = base64.b64encode(message.data).decode()
    return line


def transcript_lines(transcript: Sequence[Message]) -> list[dict[str, Any]]:
    """Describe every message; fold consecutive identical copies (resends) into ``count``."""
    lines: list[dict[str, Any]] = []
    previous: Message | None = None
    for message in transcript:
        if previous is not None and (previous.sender, previous.connection, previous.data) == (
            message.sender,
            message.connection,
            message.data,
        ):
            lines[-1]["count"] = lines[-1].get("count", 1) + 1
            lines[-1]["last_at_ms"] = round(message.at * 1000)
        else:
            lines.append(describe(message))
        previous = message
    return lines


class _SsmApi(BaseHTTPRequestHandler):
    """TerminateSession and ResumeSession, answered as the service would (JSON 1.1)."""

    calls: list[dict[str, Any]]
    agent: FakeSsmAgent

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        operation = self.headers.get("X-Amz-Target", "").rpartition(".")[2]
        self.calls.append({"api": operation, "body": body, "at": time.monotonic()})
        answer: dict[str, Any] = {"SessionId": SESSION_ID}
        if operation == "ResumeSession":
            answer.update(TokenValue=RESUME_TOKEN, StreamUrl=self.agent.stream_url)
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def _ssm_api(agent: FakeSsmAgent, calls: list[dict[str, Any]]) -> Iterator[str]:
    handler = type("SsmApi", (_SsmApi,), {"calls": calls, "agent": agent})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def record(plugin: Path, scenario: Scenario) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    with (
        FakeSsmAgent(scenario.script()) as agent,
        _ssm_api(agent, calls) as api,
        tempfile.TemporaryDirectory() as home,
    ):
        response = {"SessionId": SESSION_ID, "TokenValue": TOKEN, "StreamUrl": agent.stream_url}
        command = [
            str(plugin),
            json.dumps(response),
            "eu-west-1",
            "StartSession",
            "",
            json.dumps({"Target": TARGET}),
            api,
        ]
        environment = {
            "HOME": home,
            "PATH": "/usr/bin:/bin",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_EC2_METADATA_DISABLED": "true",
        }
        started = time.monotonic()
        # stdin stays open and silent: the plugin ends a session whose stdin reaches EOF.
        with subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environment
        ) as process:
            while process.poll() is None and time.monotonic() - started < scenario.plugin_seconds:
                if any(call["api"] == "TerminateSession" for call in calls):
                    time.sleep(0.5)
                    break
                time.sleep(0.1)
            process.kill()
            output, _ = process.communicate()
        agent.wait_done(5)
        lines = transcript_lines(agent.transcript)
        for call in calls:
            at_ms = round((call["at"] - agent.started) * 1000)
            lines.append({"from": "client", "api": call["api"], "body": call["body"], "at_ms": at_ms})
        lines.sort(key=lambda line: line["at_ms"])
        print(f"{scenario.name}: {len(lines)} lines, agent errors {agent.errors}", file=sys.stderr)
        print(output.decode(errors="replace")[-600:], file=sys.stderr)
        return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plugin", type=Path, required=True, help="the session-manager-plugin binary")
    parser.add_argument("--out", type=Path, default=Path("tests/fixtures/session_manager"))
    parser.add_argument("--source", default="unknown", help="the plugin's source (repository@commit)")
    parser.add_argument(
        "--version", default="unknown", help="what `session-manager-plugin --version` printed"
    )
    parser.add_argument("scenario", nargs="*", default=sorted(SCENARIOS))
    arguments = parser.parse_args(argv)
    arguments.out.mkdir(parents=True, exist_ok=True)
    for name in arguments.scenario:
        scenario = SCENARIOS[name]
        lines = record(arguments.plugin, scenario)
        head = {
            "scenario": name,
            "what": scenario.what,
            "source": arguments.source,
            "version": arguments.version,
        }
        text = "".join(json.dumps(line, sort_keys=True) + "\n" for line in [head, *lines])
        (arguments.out / f"{name}.jsonl").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
