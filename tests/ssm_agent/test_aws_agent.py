"""The project's Session Manager client against AWS's own agent (``../shared/ssm-agent``), through
the service stand-in: the stack's documents, both output modes, many frames, a command that cannot
start, a timeout, a late client, the agent's resends, KMS-encrypted sessions.

What a session gave is compared with the same command line run here directly (the agent splits it
with shell-like rules and runs it without a shell, as ``shlex.split`` does)."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hyperpod_ha.acting.node_commands import parse_script_output
from hyperpod_ha.commands import (
    CommandNotStarted,
    CommandRequest,
    CommandResult,
    CommandTimedOut,
    EncryptionRequired,
)
from hyperpod_ha.commands.frames import MessageType, PayloadType
from hyperpod_ha.commands.session_channel import DataChannel, StartedSession
from hyperpod_ha.commands.session_encryption import SessionDataKeys
from hyperpod_ha.commands.session_manager import SessionManagerRunner
from hyperpod_ha.drill.node import jobs_parameters, parse_node_output, takeover_parameters
from hyperpod_ha.restore.node import restore_result
from hyperpod_ha.slurm.probe_output import PROBE_RESULT_PREFIX
from tests.fakes.ssm_service import Frame, SessionService
from tests.ssm_agent.agent import INSTANCE_ID
from tests.ssm_agent.conftest import DB_SECRET_ARN, documents
from tests.ssm_agent.transcripts import record_transcript

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_ssm import SSMClient

pytestmark = pytest.mark.ssm_agent


def run(
    ssm: SSMClient,
    document: str,
    parameters: dict[str, list[str]] | None = None,
    *,
    deadline: float = 60,
    data_keys: SessionDataKeys | None = None,
) -> CommandResult:
    runner = SessionManagerRunner(ssm, data_keys=data_keys)
    return runner.run(CommandRequest(INSTANCE_ID, document, deadline, parameters or {}))


def direct(document: str, parameters: dict[str, list[str]] | None = None) -> subprocess.CompletedProcess[str]:
    """The document's command line run here, its parameters (and defaults) put in as the agent does."""
    content = documents()[document]
    values = {name: str(d.get("default", "")) for name, d in (content.get("parameters") or {}).items()}
    values.update({name: given[0] for name, given in (parameters or {}).items()})
    line = re.sub(
        r"\{\{\s*(\w+)\s*\}\}", lambda m: values[m.group(1)], content["properties"]["linux"]["commands"]
    )
    return subprocess.run(shlex.split(line), capture_output=True, text=True, timeout=120, check=False)


def frames(service: SessionService) -> list[Frame]:
    """The frames of the newest session."""
    return service.frames[list(service.frames)[-1]]


def newest_session(service: SessionService) -> str:
    return list(service.sessions)[-1]


def test_the_probe_document_runs_as_on_the_node(service: SessionService, ssm: SSMClient) -> None:
    result = run(ssm, "ControllerProbeDocument")
    here = direct("ControllerProbeDocument")

    assert result.exit_code == here.returncode
    assert result.stderr == here.stderr

    def sections(text: str) -> dict[str, int]:
        [line] = [line for line in text.splitlines() if line.startswith(PROBE_RESULT_PREFIX)]
        report = json.loads(line.removeprefix(PROBE_RESULT_PREFIX))
        assert report["complete"] is True
        return {name: values[0] for name, values in report["sections"].items()}  # each section's exit code

    assert sections(result.stdout) == sections(here.stdout)
    assert len(result.stdout.encode()) > 1024  # more than one output frame
    record_transcript("probe", frames(service))


@pytest.mark.parametrize(
    ("document", "parameters"),
    [
        ("FailoverDrillTakeoverDocument", takeover_parameters(1)),
        ("FailoverDrillJobsDocument", jobs_parameters("list")),
        ("FailoverDrillAccountingDocument", {}),
    ],
    ids=["takeover", "jobs", "accounting"],
)
def test_the_drills_commands_run_as_on_the_node(
    ssm: SSMClient, document: str, parameters: dict[str, list[str]]
) -> None:
    result = run(ssm, document, parameters)
    here = direct(document, parameters)

    assert (result.stdout, result.stderr, result.exit_code) == (here.stdout, here.stderr, here.returncode)
    assert parse_node_output(result.stdout) == parse_node_output(here.stdout)


def test_the_restores_start_runs_as_on_the_node(ssm: SSMClient) -> None:
    result = run(ssm, "RestoreSlurmctldDocument")
    here = direct("RestoreSlurmctldDocument")

    assert (result.stdout, result.stderr, result.exit_code) == (here.stdout, here.stderr, here.returncode)
    assert restore_result(parse_script_output(result.stdout)) == restore_result(
        parse_script_output(here.stdout)
    )


def test_the_roll_out_runs_as_on_the_node(ssm: SSMClient) -> None:
    parameters = {"secretId": [DB_SECRET_ARN], "confPath": ["/etc/slurm/slurmdbd.conf"]}
    result = run(ssm, "SlurmdbdRolloutDocument", parameters)
    here = direct("SlurmdbdRolloutDocument", parameters)

    assert (result.stdout, result.stderr, result.exit_code) == (here.stdout, here.stderr, here.returncode)
    assert result.exit_code != 0  # no secret to fetch here: the script says so and fails


def test_merged_output_has_no_exit_code(service: SessionService, ssm: SSMClient) -> None:
    command = "sh -c 'echo to-stdout; echo to-stderr >&2; exit 4'"
    result = run(ssm, "Merged", {"command": [command]})

    assert result.stderr is None
    assert result.exit_code is None
    assert sorted(result.stdout.splitlines()) == ["to-stderr", "to-stdout"]
    assert {f.payload_type for f in frames(service) if f.message_type == MessageType.OUTPUT_STREAM_DATA} == {
        PayloadType.HANDSHAKE_REQUEST,
        PayloadType.HANDSHAKE_COMPLETE,
        PayloadType.OUTPUT,
    }
    record_transcript("merged", frames(service))


def test_output_over_many_frames_arrives_whole_and_in_order(service: SessionService, ssm: SSMClient) -> None:
    command = "sh -c 'seq 1 40000; seq 1 3000 >&2; exit 0'"
    result = run(ssm, "Separate", {"command": [command]})
    here = direct("Separate", {"command": [command]})

    assert (result.stdout, result.stderr, result.exit_code) == (here.stdout, here.stderr, 0)
    output = [f for f in frames(service) if f.sender == "agent" and f.payload_type == PayloadType.OUTPUT]
    assert len(output) > 200
    assert max(len(f.payload) for f in output) <= 1024
    record_transcript("many-frames", frames(service), payloads=False)


def test_a_command_that_cannot_start_is_named(service: SessionService, ssm: SSMClient) -> None:
    # Merged output: the agent's "Unable to start command" on stderr alone, no exit code.
    with pytest.raises(CommandNotStarted, match="/no/such/program"):
        run(ssm, "Merged", {"command": ["/no/such/program --flag"]})
    record_transcript("not-started-merged", frames(service))


def test_a_command_that_cannot_start_has_an_exit_code_with_separate_streams(
    service: SessionService, ssm: SSMClient
) -> None:
    result = run(ssm, "Separate", {"command": ["/no/such/program --flag"]})

    assert result.stdout == ""
    assert result.stderr is not None
    assert "/no/such/program" in result.stderr
    assert result.exit_code == 1
    record_transcript("not-started-separate", frames(service))


def _session_workers() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "ssm-session-wor":
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def test_a_timeout_terminates_the_session_on_the_agent(service: SessionService, ssm: SSMClient) -> None:
    with pytest.raises(CommandTimedOut):
        run(ssm, "Separate", {"command": ["sleep 120"]}, deadline=4)

    session = newest_session(service)
    assert ("AmazonSSM.TerminateSession", {"SessionId": session}) in service.api_calls
    assert any(
        t == MessageType.CHANNEL_CLOSED and p.get("SessionId") == session for _, t, p in service.control
    )
    # The agent ends the session's worker, and the command with it.
    deadline = time.monotonic() + 30
    while _session_workers() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _session_workers() == []
    record_transcript("terminated", service.frames[session])


def test_a_late_client_gets_the_handshake_the_agent_resends(service: SessionService, ssm: SSMClient) -> None:
    started = ssm.start_session(
        Target=INSTANCE_ID, DocumentName="Separate", Parameters={"command": ["echo late"]}
    )
    time.sleep(2)  # the agent opens its side and sends its handshake to nobody
    channel = DataChannel(
        StartedSession(started["SessionId"], started["TokenValue"], started["StreamUrl"]), target=INSTANCE_ID
    )
    output = asyncio.run(asyncio.wait_for(channel.run(), 30))

    assert (output.stdout, output.stderr, output.exit_code) == (b"late\n", b"", 0)
    seen = service.frames[started["SessionId"]]
    handshakes = [f for f in seen if f.payload_type == PayloadType.HANDSHAKE_REQUEST]
    assert len(handshakes) >= 3  # resent about every 200 ms until acknowledged
    assert not handshakes[0].relayed  # the first copies reached no client
    assert handshakes[-1].relayed
    record_transcript("late-client", seen)


def test_the_agent_reports_its_session_state_and_never_closes_the_channel(
    service: SessionService, ssm: SSMClient
) -> None:
    run(ssm, "Separate", {"command": ["true"]})

    seen = frames(service)
    states = [json.loads(f.payload)["SessionState"] for f in seen if f.message_type == "agent_session_state"]
    assert states[0] == "Connected"
    assert MessageType.CHANNEL_CLOSED not in {f.message_type for f in seen if f.sender == "agent"}
    completes = [
        p
        for d, t, p in service.control
        if t == "agent_task_complete" and p.get("TaskId") == newest_session(service)
    ]
    assert completes  # and the service acknowledged it (agent_task_acknowledge): no endless resend
    record_transcript("separate", seen)


@pytest.mark.parametrize("document", ["ControllerProbeDocument", "Separate"])
def test_an_encrypted_session_runs_with_the_operators_key(
    service: SessionService, ssm: SSMClient, kms: KMSClient, session_key: str, document: str
) -> None:
    parameters = (
        {}
        if document == "ControllerProbeDocument"
        else {"command": ["sh -c 'seq 1 2000; echo e >&2; exit 5'"]}
    )
    result = run(ssm, document, parameters, data_keys=SessionDataKeys(kms, session_key))
    here = direct(document, parameters)

    assert result.exit_code == here.returncode
    assert result.stderr == here.stderr
    if document == "Separate":
        assert result.stdout == here.stdout
    session = newest_session(service)
    calls = [c for c in service.kms.calls if c["EncryptionContext"].get("aws:ssm:SessionId") == session]
    assert [c["operation"] for c in calls] == ["GenerateDataKey", "Decrypt"]  # ours, then the agent's
    assert calls[0]["EncryptionContext"] == calls[1]["EncryptionContext"]
    assert set(calls[1]["EncryptionContext"]) == {
        "aws:ssm:SessionId",
        "aws:ssm:TargetId",
        "aws:ssm:RandomChallenge",
    }
    seen = service.frames[session]
    assert not any(b"EXIT_CODE" in f.payload for f in seen)  # the exit code too is encrypted
    assert [f.payload_type for f in seen if f.sender == "client" and f.message_type == "input_stream_data"][
        :2
    ] == [
        PayloadType.HANDSHAKE_RESPONSE,
        PayloadType.ENC_CHALLENGE_RESPONSE,
    ]
    if document == "Separate":
        record_transcript("encrypted", seen, payloads=False)


def test_an_encrypted_session_without_a_key_fails_at_once(
    service: SessionService, ssm: SSMClient, session_key: str
) -> None:
    started = time.monotonic()
    with pytest.raises(EncryptionRequired, match="SessionKmsKeyArn"):
        run(ssm, "Separate", {"command": ["echo never"]}, deadline=60)
    assert time.monotonic() - started < 30  # not the deadline's timeout

    assert service.wait_ended(newest_session(service)) is not None
    record_transcript("encryption-refused", frames(service))
