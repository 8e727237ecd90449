"""SessionManagerRunner against the strict fake agent, StartSession/TerminateSession stubbed."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import pytest
from botocore.stub import Stubber

from hyperpod_ha.commands import (
    AccessDenied,
    CommandError,
    CommandNotStarted,
    CommandRequest,
    CommandResult,
    CommandTimedOut,
    EncryptionRequired,
    HandshakeTimedOut,
    ProtocolError,
    SessionEndedByService,
    TargetUnreachable,
    Throttled,
)
from hyperpod_ha.commands.session_manager import CLIENT_VERSION, SessionManagerRunner, StartedSession
from hyperpod_ha.observability import logger
from tests.fakes.ssm_agent import (
    AgentScript,
    ChannelClosed,
    Drop,
    FakeSsmAgent,
    Garbage,
    Hang,
    Output,
    Reordered,
    ResendAcked,
    ServiceFrame,
    Step,
    UnknownFrame,
    exit_code,
    stderr,
    stdout,
)

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient

SESSION_ID = "hyperpod-ha-probe-0a1b2c3d4e5f67890"
TOKEN = "AAEAAZtokenMustNeverLeak0123456789abcdefghijklmnopqrstuvwxyz"
RESUMED = "AAEAAZresumedTokenMustNeverLeak0123456789abcdefghijklmnopqrstuv"
TARGET = "sagemaker-cluster:abcd1234efgh_controller-machine-i-0123456789abcdef0"
DOCUMENT = "HyperPodHA-ControllerProbe"
DEFAULT_DOCUMENT = "AWS-StartNonInteractiveCommand"
# Sequence numbers 0 and 1 are the HandshakeRequest and HandshakeComplete.
FIRST_DATA_SEQUENCE = 2


def script(*steps: Step, **options: object) -> AgentScript:
    return AgentScript(session_id=SESSION_ID, token=TOKEN, steps=steps, **options)  # type: ignore[arg-type]


@pytest.fixture
def fake_agent(request: pytest.FixtureRequest) -> Iterator[FakeSsmAgent]:
    with FakeSsmAgent(request.param) as agent:
        yield agent


def expect_start(
    stubber: Stubber,
    stream_url: str,
    *,
    document: str = DOCUMENT,
    parameters: Mapping[str, list[str]] | None = None,
) -> None:
    expected: dict[str, object] = {"Target": TARGET, "DocumentName": document}
    if parameters:
        expected["Parameters"] = dict(parameters)
    stubber.add_response(
        "start_session",
        {"SessionId": SESSION_ID, "TokenValue": TOKEN, "StreamUrl": stream_url},
        expected,
    )


def expect_terminate(stubber: Stubber) -> None:
    stubber.add_response("terminate_session", {"SessionId": SESSION_ID}, {"SessionId": SESSION_ID})


def run(
    ssm: SSMClient,
    *,
    deadline: float = 5.0,
    document: str = DOCUMENT,
    parameters: Mapping[str, list[str]] | None = None,
    max_output_bytes: int = 1 << 20,
) -> CommandResult:
    runner = SessionManagerRunner(ssm, max_output_bytes=max_output_bytes, reconnect_delay=0.01)
    request = CommandRequest(
        target=TARGET, document=document, deadline_seconds=deadline, parameters=parameters or {}
    )
    return runner.run(request)


def run_with_agent(
    agent: FakeSsmAgent,
    ssm: SSMClient,
    stubber: Stubber,
    *,
    terminated: bool = False,
    **options: object,
) -> CommandResult:
    expect_start(stubber, agent.stream_url)
    if terminated:
        expect_terminate(stubber)
    return run(ssm, **options)  # type: ignore[arg-type]


def assert_clean(agent: FakeSsmAgent) -> None:
    assert agent.wait_done()
    assert agent.errors == []
    sent = {sequence for kind, sequence in agent.events if kind == "sent"}
    assert sent, "the agent sent nothing"
    assert set(agent.acks) == sent


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
    assert 0 < result.duration_seconds < 5
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


@pytest.mark.parametrize(
    "fake_agent",
    [script(stdout(b"late\n"), exit_code(0), ChannelClosed(), handshake_delay=1.2)],
    indirect=True,
)
def test_a_late_handshake_is_waited_for(fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber) -> None:
    result = run_with_agent(fake_agent, ssm, stubber, deadline=5)

    assert result.stdout == "late\n"
    assert_clean(fake_agent)


@pytest.mark.parametrize(
    "fake_agent", [script(stdout(b"no handshake\n"), ChannelClosed(), send_handshake=False)], indirect=True
)
def test_an_agent_without_handshake_falls_back_to_its_output(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber
) -> None:
    result = run_with_agent(fake_agent, ssm, stubber)

    assert (result.stdout, result.stderr, result.exit_code) == ("no handshake\n", None, None)
    assert_clean(fake_agent)


@pytest.mark.parametrize(
    "fake_agent",
    [
        script(
            stdout(b"one "),
            Garbage('{"error": "text instead of a frame"}'),
            Garbage(b"\x00\x00\x00\x74 too short"),
            Garbage(b"\x00\x00\x00\x70" + b"x" * 200),  # HeaderLength 112: nothing AWS writes
            stdout(b"two"),
            exit_code(0),
            ChannelClosed(),
        )
    ],
    indirect=True,
)
def test_text_and_undecodable_frames_are_skipped(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber, caplog: pytest.LogCaptureFixture
) -> None:
    result = run_with_agent(fake_agent, ssm, stubber)

    assert (result.stdout, result.exit_code) == ("one two", 0)
    assert_clean(fake_agent)


@pytest.mark.parametrize(
    "fake_agent",
    [script(stdout(b"after a resend\n"), ChannelClosed(), lose_input=frozenset({0}))],
    indirect=True,
)
def test_a_lost_handshake_response_is_resent_until_acknowledged(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber
) -> None:
    result = run_with_agent(fake_agent, ssm, stubber)

    assert result.stdout == "after a resend\n"
    assert_clean(fake_agent)
    assert fake_agent.events.index(("lost", 0)) < fake_agent.events.index(("input", 0))
    copies = [m for m in fake_agent.transcript if m.sender == "client" and isinstance(m.data, bytes)]
    responses = [m.data for m in copies if m.data[4:36].rstrip() == b"input_stream_data"]
    assert len(responses) == 2
    assert responses[0] == responses[1]


@pytest.mark.parametrize(
    "fake_agent",
    [script(stdout(b"first part\n"), ChannelClosed(output="Your session timed out due to inactivity."))],
    indirect=True,
)
def test_a_session_the_service_ends_is_a_typed_error_with_its_reason(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber, ssm_calls: list[str]
) -> None:
    with pytest.raises(SessionEndedByService, match="timed out due to inactivity"):
        run_with_agent(fake_agent, ssm, stubber, terminated=True)

    assert ssm_calls == ["StartSession", "TerminateSession"]
    assert_clean(fake_agent)


@pytest.mark.parametrize(
    "fake_agent",
    [
        script(
            stderr(b'Unable to start command: exec: "scontrol": executable file not found in $PATH\n'),
            ChannelClosed(),
        )
    ],
    indirect=True,
)
def test_a_command_the_agent_cannot_start_is_a_failed_command(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber
) -> None:
    with pytest.raises(CommandNotStarted, match="could not start the command: Unable to start command"):
        run_with_agent(fake_agent, ssm, stubber, terminated=True)

    assert_clean(fake_agent)


@pytest.mark.parametrize(
    "fake_agent",
    [
        script(
            stdout(b"before "),
            Drop(resume=True),
            stdout(b"after"),
            exit_code(0),
            ChannelClosed(),
            resume_token=RESUMED,
        )
    ],
    indirect=True,
)
def test_a_dropped_connection_is_resumed_with_a_new_token(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber, ssm_calls: list[str]
) -> None:
    expect_start(stubber, fake_agent.stream_url)
    stubber.add_response(
        "resume_session",
        {"SessionId": SESSION_ID, "TokenValue": RESUMED, "StreamUrl": fake_agent.stream_url},
        {"SessionId": SESSION_ID},
    )

    result = run(ssm)

    assert (result.stdout, result.exit_code) == ("before after", 0)
    assert ssm_calls == ["StartSession", "ResumeSession"]
    assert_clean(fake_agent)
    assert fake_agent.connections == 2
    first, second = fake_agent.openings
    assert second["TokenValue"] == RESUMED
    assert second["ClientId"] == first["ClientId"]
    assert second["RequestId"] != first["RequestId"]


# --- failures after StartSession: typed error, session terminated -----------------------


@pytest.mark.parametrize("fake_agent", [script(stdout(b"partial"), Hang())], indirect=True)
def test_session_that_never_closes_is_terminated_at_the_deadline(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber, ssm_calls: list[str]
) -> None:
    started = time.monotonic()
    with pytest.raises(CommandTimedOut, match=r"within 0\.5 s"):
        run_with_agent(fake_agent, ssm, stubber, terminated=True, deadline=0.5)

    assert 0.5 <= time.monotonic() - started < 2.0
    assert ssm_calls == ["StartSession", "TerminateSession"]
    assert fake_agent.wait_done()
    assert fake_agent.errors == []
    assert fake_agent.acks[2] == 1  # output was acknowledged while waiting


@pytest.mark.parametrize("fake_agent", [script(Hang(), send_handshake=False)], indirect=True)
def test_missing_handshake_fails_at_the_deadline_of_the_check(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber, ssm_calls: list[str]
) -> None:
    started = time.monotonic()
    with pytest.raises(
        HandshakeTimedOut, match=r"no handshake from the agent within the deadline of 0\.6 s"
    ) as raised:
        run_with_agent(fake_agent, ssm, stubber, terminated=True, deadline=0.6)

    assert isinstance(raised.value, ProtocolError)
    assert 0.6 <= time.monotonic() - started < 2.0
    assert ssm_calls == ["StartSession", "TerminateSession"]
    assert fake_agent.wait_done()
    assert fake_agent.errors == []


@pytest.mark.parametrize(
    "fake_agent",
    [
        script(
            Hang(), kms_key_id="arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
        )
    ],
    indirect=True,
)
def test_kms_encryption_request_is_answered_failed_then_refused(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber, ssm_calls: list[str]
) -> None:
    started = time.monotonic()
    with pytest.raises(EncryptionRequired, match="KMS encryption"):
        run_with_agent(fake_agent, ssm, stubber, terminated=True, deadline=10)

    assert time.monotonic() - started < 1.0
    assert ssm_calls == ["StartSession", "TerminateSession"]
    assert fake_agent.wait_done()
    assert fake_agent.errors == []
    response = fake_agent.handshake_response
    assert response is not None  # answered, so the agent ends the session with a reason
    statuses = {a["ActionType"]: (a["ActionStatus"], a["Error"]) for a in response["ProcessedClientActions"]}
    assert statuses["SessionType"] == (1, "")
    assert statuses["KMSEncryption"][0] == 2
    assert "does not support Session Manager encryption" in statuses["KMSEncryption"][1]
    assert response["Errors"] == ["this client does not support Session Manager encryption"]


@pytest.mark.parametrize("fake_agent", [script(stdout(b"partial"), Drop())], indirect=True)
def test_a_session_that_can_no_longer_be_resumed_was_ended(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber, ssm_calls: list[str]
) -> None:
    expect_start(stubber, fake_agent.stream_url)
    stubber.add_response("resume_session", {"SessionId": SESSION_ID}, {"SessionId": SESSION_ID})
    expect_terminate(stubber)

    with pytest.raises(SessionEndedByService, match="can no longer be resumed"):
        run(ssm)

    assert ssm_calls == ["StartSession", "ResumeSession", "TerminateSession"]


@pytest.mark.parametrize(
    "fake_agent",
    [script(stdout(b"partial"), Drop(abort=True)), script(stdout(b"partial"), Drop(abort=False))],
    indirect=True,
    ids=["aborted", "closed"],
)
def test_connection_lost_for_good_is_a_typed_error(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber, ssm_calls: list[str]
) -> None:
    expect_start(stubber, fake_agent.stream_url)
    stubber.add_client_error("resume_session", "DoesNotExistException", f"Session {SESSION_ID} not found")
    expect_terminate(stubber)

    with pytest.raises(CommandError, match="ResumeSession") as raised:
        run(ssm)

    assert "DoesNotExistException" in raised.value.reason
    assert ssm_calls == ["StartSession", "ResumeSession", "TerminateSession"]
    assert fake_agent.wait_done()
    assert fake_agent.errors == []


@pytest.mark.parametrize(
    "fake_agent",
    [script(Hang(), extra_actions=[{"ActionType": "Telepathy", "ActionParameters": {}}])],
    indirect=True,
)
def test_an_unknown_client_action_is_answered_unsupported_then_refused(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber
) -> None:
    with pytest.raises(ProtocolError, match="unsupported client action 'Telepathy'"):
        run_with_agent(fake_agent, ssm, stubber, terminated=True)

    assert fake_agent.wait_done()
    assert fake_agent.errors == []
    assert fake_agent.handshake_response == {
        "ClientVersion": CLIENT_VERSION,
        "ProcessedClientActions": [
            {"ActionType": "SessionType", "ActionStatus": 1, "ActionResult": None, "Error": ""},
            {
                "ActionType": "Telepathy",
                "ActionStatus": 3,
                "ActionResult": None,
                "Error": "Unsupported action Telepathy",
            },
        ],
        "Errors": ["Unsupported action Telepathy"],
    }


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
