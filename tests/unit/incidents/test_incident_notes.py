"""Note requests (a restore's lines for the open incidents): rejected with a reason, redacted and
bounded; and the notes' value kept within OpsCenter's limit, the oldest dropped first."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.incidents import InvalidIncidentRequest, NoteRequest
from hyperpod_ha.incidents.keys import KIND_REDUNDANCY_LOST
from hyperpod_ha.incidents.limits import OPERATIONAL_DATA_VALUE_LIMIT
from hyperpod_ha.incidents.models import MAX_NOTE_KINDS, MAX_NOTE_LINES, NOTE_LINE_CHARS, WITHHELD_LINE
from hyperpod_ha.incidents.noting import fitted
from hyperpod_ha.redaction import scrub_text
from tests.unit.incidents.cases.incident_world import EXECUTION


def note_event(**changes: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "action": "note",
        "cluster": "ml-cluster",
        "kinds": [KIND_REDUNDANCY_LOST, "HEALTHY"],
        "execution_id": EXECUTION,
        "lines": ["ctl2: start-slurmctld: restored (ctl2: slurmctld runs, logged the standby role)"],
    }
    event.update(changes)
    return event


def test_a_note_request_is_read_whole() -> None:
    request = NoteRequest.from_event(note_event())
    assert request.cluster == "ml-cluster"
    assert request.kinds == frozenset({KIND_REDUNDANCY_LOST, "HEALTHY"})
    assert request.execution_id == EXECUTION
    assert request.lines == (
        "ctl2: start-slurmctld: restored (ctl2: slurmctld runs, logged the standby role)",
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"cluster": "bad name!"}, "cluster is not a HyperPod cluster name"),
        ({"cluster": None}, "cluster is required"),
        ({"kinds": "redundancy-lost"}, "kinds must be a list of 1-4 kinds"),
        ({"kinds": []}, "kinds must be a list of 1-4 kinds"),
        ({"kinds": ["a", "b", "c", "d", "e"]}, "kinds must be a list of 1-4 kinds"),
        ({"kinds": [KIND_REDUNDANCY_LOST, 3]}, "kinds must be a list of strings"),
        ({"kinds": ["two words"]}, "kind must be"),
        ({"kinds": [""]}, "verdict or kind is required"),
        ({"lines": "one line"}, "lines must be a list of 1-32 strings"),
        ({"lines": []}, "lines must be a list of 1-32 strings"),
        ({"lines": ["x"] * (MAX_NOTE_LINES + 1)}, "lines must be a list of 1-32 strings"),
        ({"lines": ["fine", {"line": "not text"}]}, "lines must be a list of strings"),
        ({"execution_id": None}, "execution_id is required"),
        ({"execution_id": "arn:" + "x" * 300}, "execution_id is longer than 256 characters"),
        ({"execution_id": "hyperpod-watchdog:tick-1"}, "execution_id must be a Step Functions execution ARN"),
    ],
)
def test_bad_note_requests_are_rejected_with_a_reason(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidIncidentRequest, match=message):
        NoteRequest.from_event(note_event(**changes))


def test_the_bounds_are_what_the_messages_say() -> None:
    assert (MAX_NOTE_KINDS, MAX_NOTE_LINES) == (4, 32)


def test_a_long_line_is_cut_and_a_secret_is_redacted() -> None:
    request = NoteRequest.from_event(
        note_event(lines=["x" * 5000, "ctl2: slurmdbd said StoragePass=hunter2 at its start"])
    )
    long, secret = request.lines
    assert len(long) == NOTE_LINE_CHARS
    assert long.endswith("[truncated]")
    assert "hunter2" not in secret
    assert secret.startswith("ctl2: slurmdbd said StoragePass=")


def test_a_line_that_would_not_survive_opscenters_scrub_as_json_is_withheld() -> None:
    # Redacted, "password: [redacted]" is still a secret's form: scrubbed again inside the JSON
    # value, it would swallow the string's closing quote.
    request = NoteRequest.from_event(note_event(lines=["ctl2 password: hunter2", "ctl2: restored"]))
    assert request.lines == (WITHHELD_LINE, "ctl2: restored")
    value = fitted([{"at": "2026-12-01T10:00:00.000Z", "execution": EXECUTION, "lines": list(request.lines)}])
    assert scrub_text(value) == value
    assert "hunter2" not in value


@given(line=st.text(max_size=80))
def test_every_noted_line_is_stable_under_a_second_scrub_as_json(line: str) -> None:
    request = NoteRequest.from_event(note_event(lines=[line]))
    [kept] = request.lines
    encoded = json.dumps(kept, ensure_ascii=False)
    assert kept == WITHHELD_LINE or scrub_text(encoded) == encoded


def entry(number: int, lines: int = 4, width: int = 400) -> dict[str, Any]:
    return {
        "at": "2026-12-01T10:00:00.000Z",
        "execution": f"{EXECUTION}-{number}",
        "lines": [f"{number}:{i}:" + "y" * width for i in range(lines)],
    }


def test_the_oldest_notes_are_dropped_to_stay_within_opscenters_limit() -> None:
    entries = [entry(n) for n in range(40)]  # about 1.7 KB each: 68 KB in all
    value = fitted(entries)
    kept = json.loads(value)
    assert len(value.encode()) <= OPERATIONAL_DATA_VALUE_LIMIT
    assert kept == entries[-len(kept) :]  # the newest, in order
    assert 5 < len(kept) < 40
    assert fitted(entries[:2]) == json.dumps(entries[:2], sort_keys=True, ensure_ascii=False)


def test_a_newest_note_too_large_alone_keeps_its_first_lines_and_says_so() -> None:
    huge = entry(1, lines=32, width=NOTE_LINE_CHARS)
    huge["lines"] = ["é" * NOTE_LINE_CHARS] * 32  # two bytes a character: 32 KB of lines
    [kept] = json.loads(value := fitted([entry(0), huge]))
    assert len(value.encode()) <= OPERATIONAL_DATA_VALUE_LIMIT
    assert kept["execution"] == huge["execution"]
    assert 10 < len(kept["lines"]) < 32
    assert kept["lines"][-1].startswith("[more lines in the execution's history")
