"""SessionManagerRunner against the strict fake agent, StartSession/TerminateSession stubbed."""

from __future__ import annotations

import logging
import socket
import time
from typing import TYPE_CHECKING

import pytest
from botocore.stub import Stubber

from hyperpod_ha.commands import (
    AccessDenied,
    CommandError,
    CommandTimedOut,
    ProtocolError,
    TargetUnreachable,
    Throttled,
)
from hyperpod_ha.commands.session_manager import CLIENT_VERSION, StartedSession
from hyperpod_ha.observability import logger
from tests.fakes.ssm_agent import (
    ChannelClosed,
    Drop,
    FakeSsmAgent,
    Hang,
    Output,
    Reordered,
    ResendAcked,
    ServiceFrame,
    UnknownFrame,
    exit_code,
    stderr,
    stdout,
)
from tests.unit.commands.cases.sessions import (
    DEFAULT_DOCUMENT,
    FIRST_DATA_SEQUENCE,
    SESSION_ID,
    TARGET,
    TOKEN,
    assert_clean,
    expect_start,
    expect_terminate,
    run,
    run_with_agent,
    script,
)

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient


# --- complete sessions -----------------------------------------------------------------


@pytest.mark.parametrize(
    "fake_agent",
    [
        script(
            stdout(b"Slurmctld(primary) at ip-10-1-0-1 is UP\n"),
            stderr(b"warning\n"),
            exit_code(3),
            ChannelClosed(),
        )
    ],
    indirect=True,
)
def test_separate_streams_give_stdout_stderr_and_exit_code(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber, ssm_calls: list[str]
) -> None:
    result = run_with_agent(fake_agent, ssm, stubber)

    assert result.stdout == "Slurmctld(primary) at ip-10-1-0-1 is UP\n"
    assert result.stderr == "warning\n"
    assert result.exit_code == 3
    assert result.transport == "session-manager"
    assert result.duration_seconds > 0
    assert ssm_calls == ["StartSession"]  # a session that closed itself is not terminated
    assert_clean(fake_agent)
    assert fake_agent.acks == {0: 1, 1: 1, 2: 1, 3: 1, 4: 1}


@pytest.mark.parametrize("fake_agent", [script(exit_code(0), ChannelClosed())], indirect=True)
def test_opening_frame_and_handshake_response_follow_the_protocol(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber
) -> None:
    result = run_with_agent(fake_agent, ssm, stubber)

    assert (result.stdout, result.stderr, result.exit_code) == ("", "", 0)
    assert_clean(fake_agent)
    opening = fake_agent.opening
    assert opening is not None
    assert set(opening) == {"MessageSchemaVersion", "RequestId", "TokenValue", "ClientId", "ClientVersion"}
    assert opening["MessageSchemaVersion"] == "1.0"
    assert opening["ClientVersion"] == CLIENT_VERSION
    assert opening["RequestId"] != opening["ClientId"]
    assert fake_agent.handshake_response == {
        "ClientVersion": CLIENT_VERSION,
        "ProcessedClientActions": [
            {"ActionType": "SessionType", "ActionStatus": 1, "ActionResult": None, "Error": ""}
        ],
        "Errors": None,
    }
    assert ("input", 0) in fake_agent.events  # the HandshakeResponse was our input frame 0
    assert not any(name.lower() == "sec-websocket-extensions" for name in fake_agent.request_headers)


@pytest.mark.parametrize(
    "fake_agent", [script(stdout(bytes(range(256)) * 12 + b"tail"), ChannelClosed())], indirect=True
)
def test_default_document_merges_output_in_1024_byte_chunks_without_exit_code(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber
) -> None:
    parameters = {"command": ["sh -c 'scontrol ping; echo RESULT'"]}
    expect_start(stubber, fake_agent.stream_url, document=DEFAULT_DOCUMENT, parameters=parameters)

    result = run(ssm, document=DEFAULT_DOCUMENT, parameters=parameters)

    expected = (bytes(range(256)) * 12 + b"tail").decode("utf-8", errors="replace")
    assert result.stdout == expected
    assert result.stderr is None
    assert result.exit_code is None
    assert_clean(fake_agent)
    data_frames = [seq for kind, seq in fake_agent.events if kind == "sent" and seq >= FIRST_DATA_SEQUENCE]
    assert data_frames == [2, 3, 4, 5]  # 3076 bytes in chunks of 1024


@pytest.mark.parametrize(
    "fake_agent",
    [
        script(
            Reordered((stdout(b"a" * 1024 + b"b" * 1024 + b"c" * 10),), order=(2, 0, 1)),
            exit_code(0),
            ChannelClosed(),
        )
    ],
    indirect=True,
)
def test_frames_ahead_are_acknowledged_at_once_and_reassembled_in_order(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber
) -> None:
    result = run_with_agent(fake_agent, ssm, stubber)

    assert result.stdout == "a" * 1024 + "b" * 1024 + "c" * 10
    assert_clean(fake_agent)
    events = fake_agent.events
    # Frame 4 came first and was acknowledged before frame 2 was even sent.
    assert events.index(("sent", 4)) < events.index(("ack", 4)) < events.index(("sent", 2))


@pytest.mark.parametrize(
    "fake_agent", [script(stdout(b"once\n"), ResendAcked(2), exit_code(0), ChannelClosed())], indirect=True
)
def test_resent_frames_are_acknowledged_again_and_dropped(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber
) -> None:
    result = run_with_agent(fake_agent, ssm, stubber)

    assert result.stdout == "once\n"
    assert_clean(fake_agent)
    assert fake_agent.acks[2] == 2


@pytest.mark.parametrize(
    "fake_agent",
    [script(stdout(b"checked\n", corrupt_first_send=True), exit_code(0), ChannelClosed())],
    indirect=True,
)
def test_frame_with_bad_digest_is_not_acknowledged_and_its_resend_is_used(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber
) -> None:
    result = run_with_agent(fake_agent, ssm, stubber)

    assert result.stdout == "checked\n"
    assert_clean(fake_agent)  # the fake rejects an ack of the corrupted copy
    assert fake_agent.acks[2] == 1


@pytest.mark.parametrize(
    "fake_agent",
    [
        script(
            ServiceFrame("start_publication"),
            stdout(b"one "),
            ServiceFrame("pause_publication"),
            UnknownFrame(),
            UnknownFrame("agent_job_reply"),
            ServiceFrame("start_publication"),
            stdout(b"two"),
            exit_code(0),
            ChannelClosed(output="done"),
        ),
    ],
    indirect=True,
)
def test_service_frames_and_unknown_types_are_ignored(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber
) -> None:
    result = run_with_agent(fake_agent, ssm, stubber)

    assert result.stdout == "one two"
    assert result.exit_code == 0
    assert_clean(fake_agent)  # acknowledging a service or unknown frame would be an error


# --- failures after StartSession: typed error, session terminated -----------------------


@pytest.mark.parametrize("fake_agent", [script(stdout(b"partial"), Hang())], indirect=True)
def test_session_that_never_closes_is_terminated_at_the_deadline(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber, ssm_calls: list[str]
) -> None:
    started = time.monotonic()
    with pytest.raises(CommandTimedOut, match=r"within 0\.5 s"):
        run_with_agent(fake_agent, ssm, stubber, terminated=True, deadline=0.5)

    assert time.monotonic() - started >= 0.5  # not before its deadline (a slow machine cannot fail this)
    assert ssm_calls == ["StartSession", "TerminateSession"]
    assert fake_agent.wait_done()
    assert fake_agent.errors == []
    assert fake_agent.acks[2] == 1  # output was acknowledged while waiting


@pytest.mark.parametrize(
    ("fake_agent", "message"),
    [
        (script(Hang(), session_type="Standard_Stream"), "does not run a command"),
        (script(Hang(), extra_actions=[{"ActionType": "Telepathy", "ActionParameters": {}}]), "Telepathy"),
        (script(Output(b"EXIT_CODE: lots", payload_type=12), Hang()), "malformed exit code"),
        (
            script(Reordered((stdout(b"a" * 1025),), order=(1,)), ChannelClosed(drain=False)),
            "output frames missing from sequence number 2",
        ),
        (
            script(
                ChannelClosed(output="Unable to start command: exec: sh: not found"), send_handshake=False
            ),
            "closed before the handshake: Unable to start command",
        ),
    ],
    indirect=["fake_agent"],
    ids=["session-type", "unknown-action", "exit-code", "gap", "closed-early"],
)
def test_protocol_violations_by_the_agent_are_typed_errors(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber, message: str
) -> None:
    with pytest.raises(ProtocolError, match=message):
        run_with_agent(fake_agent, ssm, stubber, terminated=True)

    assert fake_agent.wait_done()
    assert fake_agent.errors == []


@pytest.mark.parametrize("fake_agent", [script(stdout(b"x" * 5000), Hang())], indirect=True)
def test_runaway_output_is_cut_off(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber, ssm_calls: list[str]
) -> None:
    with pytest.raises(CommandError, match="output exceeds 2000 bytes"):
        run_with_agent(fake_agent, ssm, stubber, terminated=True, max_output_bytes=2000)

    assert ssm_calls == ["StartSession", "TerminateSession"]


def test_unreachable_stream_url_is_a_protocol_error(ssm: SSMClient, stubber: Stubber) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    expect_start(stubber, f"ws://127.0.0.1:{port}/v1/data-channel/{SESSION_ID}")
    expect_terminate(stubber)

    with pytest.raises(ProtocolError, match="could not connect to the data channel"):
        run(ssm)


def test_failed_terminate_does_not_hide_the_original_error(ssm: SSMClient, stubber: Stubber) -> None:
    expect_start(stubber, "not-a-websocket-url")
    stubber.add_client_error("terminate_session", "InternalServerError", "try again")

    with pytest.raises(ProtocolError, match="unusable StreamUrl"):
        run(ssm)


# --- StartSession failures: typed error, nothing to terminate ---------------------------


@pytest.mark.parametrize(
    ("code", "error_type"),
    [
        ("TargetNotConnected", TargetUnreachable),
        ("AccessDeniedException", AccessDenied),
        ("ThrottlingException", Throttled),
        ("InvalidDocument", CommandError),
    ],
)
def test_start_session_errors_map_to_typed_errors(
    ssm: SSMClient, stubber: Stubber, ssm_calls: list[str], code: str, error_type: type[CommandError]
) -> None:
    stubber.add_client_error("start_session", code, f"{code} for {TARGET}")

    with pytest.raises(error_type) as raised:
        run(ssm)

    assert type(raised.value) is error_type
    assert code in raised.value.reason
    assert TARGET in raised.value.reason
    assert ssm_calls == ["StartSession"]


# --- the session token stays secret --------------------------------------------------------


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.text: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.text.append(repr(record.__dict__))


@pytest.mark.parametrize(
    ("fake_agent", "fails"),
    [(script(stdout(b"ok"), Drop()), True), (script(stdout(b"ok"), exit_code(0), ChannelClosed()), False)],
    indirect=["fake_agent"],
    ids=["failure", "success"],
)
def test_token_never_appears_in_logs_errors_or_results(
    fake_agent: FakeSsmAgent,
    ssm: SSMClient,
    stubber: Stubber,
    *,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    fails: bool,
) -> None:
    records = _Records()
    logging.getLogger(logger.name).addHandler(records)
    previous = logger.log_level
    logger.setLevel("DEBUG")
    caplog.set_level(logging.DEBUG)
    outcome: object
    try:
        if fails:
            expect_start(stubber, fake_agent.stream_url)
            stubber.add_client_error("resume_session", "DoesNotExistException", "session not found")
            expect_terminate(stubber)
            with pytest.raises(CommandError) as raised:
                run(ssm)
            outcome = raised.value
        else:
            outcome = run_with_agent(fake_agent, ssm, stubber)
    finally:
        logger.setLevel(previous)
        logging.getLogger(logger.name).removeHandler(records)

    captured = capsys.readouterr()
    assert records.text, "the runner logged nothing at all"
    assert TOKEN not in "".join(records.text)
    assert TOKEN not in caplog.text
    assert TOKEN not in captured.out + captured.err
    assert TOKEN not in repr(outcome) + str(outcome)
    assert TOKEN not in repr(StartedSession(SESSION_ID, TOKEN, fake_agent.stream_url))
