"""The runner behaves as AWS's client does where the project's client used to differ.

Late or missing handshakes, lost frames, bad frames, sessions the service ends, commands
that cannot start, dropped connections, actions the client cannot do: each as
``aws/session-manager-plugin`` handles it (see ``test_plugin_fixtures`` for the frames).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest
from botocore.stub import Stubber

from hyperpod_ha.commands import (
    CommandError,
    CommandNotStarted,
    EncryptionRequired,
    HandshakeTimedOut,
    ProtocolError,
    SessionEndedByService,
)
from hyperpod_ha.commands.session_manager import CLIENT_VERSION
from tests.fakes.ssm_agent import (
    ChannelClosed,
    Drop,
    FakeSsmAgent,
    Garbage,
    Hang,
    exit_code,
    stderr,
    stdout,
)
from tests.unit.commands.cases.sessions import (
    RESUMED,
    SESSION_ID,
    assert_clean,
    expect_start,
    expect_terminate,
    run,
    run_with_agent,
    script,
)

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient


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
    assert time.monotonic() - started >= 0.6  # not before its deadline (a slow machine cannot fail this)
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
def test_kms_encryption_without_a_key_is_answered_failed_then_refused(
    fake_agent: FakeSsmAgent, ssm: SSMClient, stubber: Stubber, ssm_calls: list[str]
) -> None:
    # Refused at once: waiting for the 10 s deadline would end in a timeout error instead.
    with pytest.raises(EncryptionRequired, match="KMS encryption"):
        run_with_agent(fake_agent, ssm, stubber, terminated=True, deadline=10)

    assert ssm_calls == ["StartSession", "TerminateSession"]
    assert fake_agent.wait_done()
    assert fake_agent.errors == []
    response = fake_agent.handshake_response
    assert response is not None  # answered, so the agent ends the session with a reason
    statuses = {a["ActionType"]: (a["ActionStatus"], a["Error"]) for a in response["ProcessedClientActions"]}
    assert statuses["SessionType"] == (1, "")
    assert statuses["KMSEncryption"][0] == 2
    assert "no key is configured: set the stack's SessionKmsKeyArn" in statuses["KMSEncryption"][1]
    [error] = response["Errors"]
    assert error.startswith("no session data key:")
    assert "SessionKmsKeyArn" in error


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
