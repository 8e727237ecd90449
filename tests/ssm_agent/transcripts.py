"""Transcripts of what AWS's agent sent through the service stand-in, kept in
``tests/fixtures/ssm_agent/`` when ``HYPERPOD_HA_RECORD_AGENT=1`` (by hand, with the tier):
``tests/unit/commands/test_fake_agent_like_aws.py`` holds the project's fake agent to them.

One JSON line a frame, in the order the service saw them: ``sender``, ``at_ms`` (since the
session's first frame), the header (``message_type``, ``sequence_number``, ``flags``,
``payload_type``), ``relayed`` (false: the service had no client to relay it to) and the
``payload``: its JSON, else ``{"text": ...}``, or ``{"bytes": n}`` (not text, or ``payloads`` false:
long output).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence

from tests.conftest import ROOT
from tests.fakes.ssm_service import Frame

FIXTURES = ROOT / "tests" / "fixtures" / "ssm_agent"


def frame_record(frame: Frame, first: float, *, payloads: bool = True) -> dict[str, object]:
    payload: object = {"bytes": len(frame.payload)}
    try:
        payload = json.loads(frame.payload)
    except ValueError:
        if payloads:
            with contextlib.suppress(UnicodeDecodeError):
                payload = {"text": frame.payload.decode()}
    return {
        "sender": frame.sender,
        "at_ms": round((frame.at - first) * 1000),
        "message_type": frame.message_type,
        "sequence_number": frame.sequence_number,
        "flags": frame.flags,
        "payload_type": frame.payload_type,
        "relayed": frame.relayed,
        "payload": payload,
    }


def record_transcript(name: str, frames: Sequence[Frame], *, payloads: bool = True) -> None:
    if os.environ.get("HYPERPOD_HA_RECORD_AGENT") != "1" or not frames:
        return
    FIXTURES.mkdir(parents=True, exist_ok=True)
    first = frames[0].at
    lines = [json.dumps(frame_record(frame, first, payloads=payloads), sort_keys=True) for frame in frames]
    (FIXTURES / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
