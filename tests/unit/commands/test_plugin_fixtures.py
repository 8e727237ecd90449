"""The project's client against what AWS's own client sent, recorded frame by frame.

``tests/fixtures/session_manager/*.jsonl`` hold what ``aws/session-manager-plugin`` sent
to the fake agent for each scenario of ``tests.fakes.session_scenarios`` (recorded by
``tools/session_manager_plugin/record.sh``). Here our client plays the same scenarios
with the recording's UUIDs, clock and client version injected: where the frames do not
depend on timing they must be the same bytes; elsewhere the same frames field by field,
with the same resends and API calls.

Recorded differences, each asserted rather than hidden:
- the plugin also sends the terminal size (input payload type 3); a command has no terminal;
- the plugin does not acknowledge a resend of a frame it already processed; we do (the
  agent ignores the second ack; it ends the resends of a frame whose first ack was lost);
- the plugin answers an unknown client action with ``ActionStatus`` 0 and the status in
  ``ActionResult`` (``streaming.go`` sets the wrong field); we send ``ActionStatus`` 3.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from hyperpod_ha.commands import CommandError, SessionEndedByService
from hyperpod_ha.commands.frames import MessageType, PayloadType
from hyperpod_ha.commands.session_channel import DataChannel, StartedSession
from hyperpod_ha.commands.session_outgoing import MAX_RESENDS
from hyperpod_ha.commands.session_output import SessionOutput
from tests.fakes.record_plugin import transcript_lines
from tests.fakes.session_scenarios import RESUME_TOKEN, SCENARIOS, SERVICE_REASON, SESSION_ID, TOKEN
from tests.fakes.ssm_agent import FakeSsmAgent

FIXTURES = Path(__file__).parents[2] / "fixtures" / "session_manager"
Line = dict[str, Any]
_T = TypeVar("_T")


def load(name: str) -> tuple[Line, list[Line]]:
    head, *lines = (json.loads(text) for text in (FIXTURES / f"{name}.jsonl").read_text().splitlines())
    return head, lines


def websocket_lines(lines: list[Line]) -> list[Line]:
    return [line for line in lines if line["from"] == "client" and "websocket" in line]


def is_terminal_size(line: Line) -> bool:
    return (
        line.get("message_type") == MessageType.INPUT_STREAM_DATA
        and line.get("payload_type") == PayloadType.SIZE
    )


def _feed(values: list[_T], fallback: Callable[[], _T]) -> Callable[[], _T]:
    """The recording's values in order, then ``fallback``'s (a client sending more frames)."""
    remaining: Iterator[_T] = iter(values)
    return lambda: next(remaining, None) or fallback()


def replay(name: str, recorded: list[Line], deadline: float) -> tuple[list[Line], object, list[str]]:
    """Run our DataChannel on the scenario with the recording's UUIDs and dates; our transcript."""
    uuids: list[uuid.UUID] = []
    dates: list[int] = []
    openings = [json.loads(line["text"]) for line in websocket_lines(recorded) if line["websocket"] == "text"]
    uuids.append(uuid.UUID(openings[0]["ClientId"]))
    for line in websocket_lines(recorded):
        if line["websocket"] == "text":
            uuids.append(uuid.UUID(json.loads(line["text"])["RequestId"]))
        elif "message_id" in line and not is_terminal_size(line):
            uuids.append(uuid.UUID(line["message_id"]))
            dates.append(line["created_date"])
    calls: list[str] = []

    async def resume() -> str:
        calls.append("ResumeSession")
        return RESUME_TOKEN

    outcome: SessionOutput | Exception
    scenario = SCENARIOS[name]
    script = scenario.script()
    if scenario.deterministic:
        # A loaded test machine must not turn a slow ack into an agent resend: bytes would differ.
        script = dataclasses.replace(script, resend_interval=2.0)
    with FakeSsmAgent(script) as agent:
        channel = DataChannel(
            StartedSession(SESSION_ID, TOKEN, agent.stream_url),
            resume=resume,
            client_version=openings[0]["ClientVersion"],
            new_uuid=_feed(uuids, uuid.uuid4),
            now_millis=_feed(dates, lambda: dates[-1]),
            reconnect_delay=0.01,
        )

        async def session() -> SessionOutput:
            async with asyncio.timeout(deadline):
                return await channel.run()

        try:
            outcome = asyncio.run(session())
        except (CommandError, TimeoutError) as error:
            outcome = error
            calls.append("TerminateSession")  # what SessionManagerRunner does on any failure
        assert agent.wait_done()
        assert agent.errors == []
        return transcript_lines(agent.transcript), outcome, calls


def wire(lines: list[Line]) -> list[tuple[str, int]]:
    """Each client message as sent: its bytes (or text) and how many copies in a row."""
    return [(line.get("raw") or line["text"], line.get("count", 1)) for line in websocket_lines(lines)]


def fields(line: Line) -> tuple[object, ...]:
    """What must agree when the bytes cannot: no ids, dates or client version."""
    if line["websocket"] == "text":
        opening = json.loads(line["text"])
        return ("text", line["connection"], opening["TokenValue"], opening["MessageSchemaVersion"])
    payload = dict(line["payload"]) if isinstance(line["payload"], dict) else line["payload"]
    if isinstance(payload, dict):
        payload.pop("AcknowledgedMessageId", None)
        payload.pop("ClientVersion", None)
    return (
        line["connection"],
        line["message_type"],
        line["flags"],
        line["sequence_number"],
        line["payload_type"],
        json.dumps(payload, sort_keys=True),
        line["header_length"],
    )


def api_calls(lines: list[Line]) -> list[str]:
    return [line["api"] for line in lines if "api" in line]


def acked_resends(lines: list[Line]) -> list[int]:
    """Sequence numbers acknowledged more than once (acks of resends)."""
    acked = [
        line["payload"]["AcknowledgedMessageSequenceNumber"]
        for line in websocket_lines(lines)
        if line.get("message_type") == MessageType.ACKNOWLEDGE
    ]
    return sorted({sequence for sequence in acked if acked.count(sequence) > 1})


def test_every_scenario_was_recorded_from_aws_client() -> None:
    recorded = {path.stem for path in FIXTURES.glob("*.jsonl")}
    assert recorded == set(SCENARIOS)
    for name in recorded:
        head, lines = load(name)
        assert head["source"].startswith("aws/session-manager-plugin@")
        assert all(line.get("header_length", 116) == 116 for line in websocket_lines(lines))
        assert base64.b64decode(websocket_lines(lines)[1]["raw"])[:4] == b"\x00\x00\x00\x74"
        if SCENARIOS[name].deterministic:  # recorded without a single resend by either side
            assert all(line.get("count", 1) == 1 for line in lines if "websocket" in line)


@pytest.mark.parametrize(
    "name",
    [name for name, scenario in SCENARIOS.items() if scenario.deterministic and name != "unknown-action"],
)
def test_our_frames_are_aws_client_frames_byte_for_byte(name: str) -> None:
    _, recorded = load(name)

    ours, outcome, calls = replay(name, recorded, deadline=10)

    theirs = [line for line in recorded if not is_terminal_size(line)]
    assert wire(ours) == wire(theirs)
    assert calls == api_calls(recorded) + (["TerminateSession"] if isinstance(outcome, Exception) else [])
    if name == "service-ends":
        assert isinstance(outcome, SessionEndedByService)
        assert SERVICE_REASON in str(outcome)
    else:
        assert isinstance(outcome, SessionOutput)


def test_unknown_action_answer_differs_only_where_the_plugin_sets_the_wrong_field() -> None:
    _, recorded = load("unknown-action")

    ours, outcome, _ = replay("unknown-action", recorded, deadline=10)

    assert isinstance(outcome, CommandError)
    assert "Telepathy" in str(outcome)
    theirs_lines, ours_lines = websocket_lines(recorded), websocket_lines(ours)
    assert [fields(line) for line in ours_lines][:2] == [fields(line) for line in theirs_lines][:2]
    theirs_answer, ours_answer = theirs_lines[2]["payload"], ours_lines[2]["payload"]
    assert theirs_answer["Errors"] == ours_answer["Errors"] == ["Unsupported action Telepathy"]
    theirs_action, ours_action = (
        theirs_answer["ProcessedClientActions"][1],
        ours_answer["ProcessedClientActions"][1],
    )
    assert (theirs_action["ActionStatus"], theirs_action["ActionResult"]) == (0, 3)
    assert (ours_action["ActionStatus"], ours_action["ActionResult"]) == (3, None)
    assert theirs_action["Error"] == ours_action["Error"] == "Unsupported action Telepathy"


def test_an_agent_resending_frames_gets_the_same_acks_plus_one_for_the_resend() -> None:
    _, recorded = load("agent-resends")

    ours, outcome, _ = replay("agent-resends", recorded, deadline=10)

    assert isinstance(outcome, SessionOutput)
    assert outcome.stdout == b"once\ntwice\n"
    assert acked_resends(recorded) == []  # the plugin stays silent on a resend
    assert acked_resends(ours) == [2]
    ours_fields = [fields(line) for line in websocket_lines(ours)]
    duplicate = ours_fields.index(next(f for f in ours_fields if ours_fields.count(f) > 1))
    del ours_fields[duplicate]
    assert ours_fields == [fields(line) for line in websocket_lines(recorded) if not is_terminal_size(line)]


@pytest.mark.parametrize(
    ("name", "deadline"), [("lost-frame", 10.0), ("resume", 10.0), ("client-terminates", 2.0)]
)
def test_resends_reconnections_and_termination_match_aws_client(name: str, deadline: float) -> None:
    _, recorded = load(name)

    ours, outcome, calls = replay(name, recorded, deadline)

    theirs = [line for line in websocket_lines(recorded) if not is_terminal_size(line)]
    assert [fields(line) for line in websocket_lines(ours)] == [fields(line) for line in theirs]
    resent = {fields(line) for line in theirs if line.get("count", 1) > 1}
    assert resent == {fields(line) for line in websocket_lines(ours) if line.get("count", 1) > 1}
    assert calls == api_calls(recorded)
    if name == "client-terminates":
        assert isinstance(outcome, TimeoutError)
        assert resent, "the unacknowledged HandshakeResponse was resent"
        # The plugin resent it every 100 ms for five minutes before giving up; we give up at our deadline.
        assert max(line.get("count", 1) for line in theirs) > MAX_RESENDS
    else:
        assert isinstance(outcome, SessionOutput)
