"""The probe script's slurmctld_http section on a fake controller: Slurm's own /readyz and /livez
(25.11+) asked of the node's slurmctld on SlurmctldPort, and the honest "no answer" of every other
case (an older release, disable_http, a slurmctld that closes unanswered or is not listening)."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator

import pytest

from hyperpod_ha.commands import CommandResult
from hyperpod_ha.controllers.check import report_from_result
from hyperpod_ha.controllers.models import ReportStatus, SlurmctldHttpEvidence
from tests.fakes.probe_host import NODE, ProbeHost


class _Slurmctld(http.server.BaseHTTPRequestHandler):
    """slurmctld's HTTP paths as a standby answers them: /readyz 500, /livez 204."""

    protocol_version = "HTTP/1.1"
    readyz = 500

    def do_GET(self) -> None:
        self.send_response(self.readyz if self.path == "/readyz" else 204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_port() -> Iterator[int]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Slurmctld)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def closing_port() -> Iterator[int]:
    """A listener that reads the request and closes unanswered, as 25.11 built without a parser."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            connection.recv(1024)
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    listener.close()


def http_evidence(
    controller: ProbeHost, version: str, port: int | None, params: str = ""
) -> SlurmctldHttpEvidence:
    controller.commands["slurmctld"] = f'[ "$1" = -V ] && echo "slurm {version}"\n'
    extra = f"SlurmctldPort           = {port}\n" if port else ""
    extra += f"CommunicationParameters = {params}\n" if params else ""
    (controller.root / "show_config.txt").write_text(controller.show_config() + extra)
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert report.status is ReportStatus.CHECKED
    return report.http


def test_a_25_11_standby_answers_500_on_readyz_and_204_on_livez(
    controller: ProbeHost, http_port: int
) -> None:
    assert http_evidence(controller, "25.11.7", http_port) == SlurmctldHttpEvidence(
        served=True, readyz=500, livez=204
    )


def test_the_controller_in_control_answers_204(
    controller: ProbeHost, http_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_Slurmctld, "readyz", 204)
    assert http_evidence(controller, "26.05.3", http_port).readyz == 204


def test_24_11_is_not_asked(controller: ProbeHost, http_port: int) -> None:
    found = http_evidence(controller, "24.11.5", http_port)
    assert found == SlurmctldHttpEvidence(
        served=False, why="Slurm 24.11.5 serves no /readyz (added in 25.11)"
    )


def test_disable_http_is_not_asked(controller: ProbeHost, http_port: int) -> None:
    found = http_evidence(controller, "25.11.7", http_port, "block_null_hash,disable_http")
    assert found == SlurmctldHttpEvidence(served=False, why="CommunicationParameters=disable_http")


def test_a_build_without_an_http_parser_closes_unanswered(controller: ProbeHost, closing_port: int) -> None:
    found = http_evidence(controller, "25.11.7", closing_port)
    assert (found.served, found.readyz, found.livez) == (None, None, None)
    assert found.why == "connection closed without an HTTP answer (built without an HTTP parser?)"


def test_a_slurmctld_that_does_not_listen_refuses(controller: ProbeHost) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
    found = http_evidence(controller, "25.11.7", port)
    assert (found.readyz, found.why) == (None, f"connection refused on port {port}")


def test_an_unknown_version_is_said(controller: ProbeHost) -> None:
    found = http_evidence(controller, "garbage", None)
    assert found == SlurmctldHttpEvidence(served=None, why="this node's slurmctld version is unknown")


def test_hyperpod_s_hand_the_slurm_link_and_the_nodes_it_replaces(controller: ProbeHost) -> None:
    installed = controller.root / "opt" / "slurm-25.11.7"
    installed.mkdir(parents=True)
    (controller.root / "opt" / "slurm").symlink_to(installed)
    controller.env["HYPERPOD_HA_SLURM_LINK"] = str(controller.root / "opt" / "slurm")
    controller.commands["sinfo"] = (
        'case "$*" in\n'
        "  *-R*) echo 'ip-10-1-2-3|Action:Replace'; echo 'node9|Not responding';;\n"
        "  *) echo 'idle 2';;\nesac\n"
    )
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert (report.hyperpod.slurm_link, report.hyperpod.node_actions) == (
        str(installed),
        ("ip-10-1-2-3: Action:Replace",),
    )
    assert report.hyperpod.error is None


def test_the_on_off_program_s_failed_publishes_on_the_shared_file_system(controller: ProbeHost) -> None:
    shared = controller.root / "fsx" / "aws" / "hyperpod" / "c"
    (shared / "opt" / "slurm" / "etc").mkdir(parents=True)
    conf = shared / "opt" / "slurm" / "etc" / "slurm.conf"
    conf.write_text("ClusterName=lab\n")
    (controller.root / "slurm.conf").symlink_to(conf)
    controller.env["SLURM_CONF"] = str(controller.root / "slurm.conf")
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    log = shared / "var" / "log" / "slurm" / "notification_attempts.log"
    assert (report.notify_failures.path, report.notify_failures.failures) == (str(log), 0)  # no file: none

    log.parent.mkdir(parents=True)
    log.write_text(
        "10:00:00Z Failed to send notification to SNS. Error: An error occurred (AuthorizationError)\n"
        "10:05:00Z Failed to send notification to SNS. Error: Could not connect to the endpoint URL\n"
    )
    found = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t")).notify_failures
    assert found.failures == 2
    assert found.last_failure is not None
    assert found.last_failure.endswith("Error: Could not connect to the endpoint URL")
    assert found.age_seconds is not None
    assert found.age_seconds < 60


def test_notification_attempts_outside_hyperpod_s_layout_is_said(controller: ProbeHost) -> None:
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert report.notify_failures.failures is None
    assert report.notify_failures.error is not None
    assert "is not in HyperPod's shared layout" in report.notify_failures.error
