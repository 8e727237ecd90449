"""The Slurm trigger message: the one form both ends use, and everything else refused."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.errors import InputRejected
from hyperpod_ha.slurm.triggers import (
    EVENTS,
    MAX_MESSAGE_CHARS,
    SUBJECT,
    TRIGGER_EVENTS,
    TriggerMessageRejected,
    parse_trigger_message,
    trigger_message,
)

AT = "2026-12-06T17:00:00Z"


@pytest.mark.parametrize("event", [event.name for event in TRIGGER_EVENTS])
def test_each_event_round_trips(event: str) -> None:
    parsed = parse_trigger_message(SUBJECT, trigger_message(event, "ctl1", "2026-12-06T17:00:00Z"))
    assert (parsed.event.name, parsed.host, parsed.at) == (event, "ctl1", "2026-12-06T17:00:00Z")


def test_only_the_buffer_full_event_opens_the_accounting_incident() -> None:
    assert [e.name for e in TRIGGER_EVENTS if e.effect == "accounting"] == [
        "primary_slurmctld_acct_buffer_full"
    ]
    assert EVENTS["backup_slurmctld_failure"].effect == "verify"


@pytest.mark.parametrize(
    ("subject", "message", "reason"),
    [
        (
            "Slurm Controller Status Change",
            trigger_message("backup_slurmctld_failure", "ctl1", "2026-12-06T17:00:00Z"),
            "subject",
        ),
        (SUBJECT, "", "empty"),
        (SUBJECT, "Slurm trigger fini fired on ctl1 at 2026-12-06T17:00:00Z", "not one of the triggers"),
        (
            SUBJECT,
            "Slurm trigger backup_slurmctld_failure fired on ctl_1 at 2026-12-06T17:00:00Z",
            "host name",
        ),
        (SUBJECT, "Slurm trigger backup_slurmctld_failure fired on ctl1 at 2026-13-06T17:00:00Z", "UTC time"),
        (SUBJECT, "Slurm trigger backup_slurmctld_failure fired on ctl1", "not 'Slurm trigger"),
        (SUBJECT, "x" * (MAX_MESSAGE_CHARS + 1), "longer"),
        (None, "Slurm trigger backup_slurmctld_failure fired on ctl1 at 2026-12-06T17:00:00Z", "subject"),
    ],
)
def test_anything_else_is_refused_with_its_reason(subject: str | None, message: str, reason: str) -> None:
    with pytest.raises(TriggerMessageRejected, match=reason) as raised:
        parse_trigger_message(subject, message)
    assert isinstance(raised.value, InputRejected)


@given(st.text(max_size=400))
def test_any_text_is_parsed_or_refused_never_raises_otherwise(message: str) -> None:
    with contextlib.suppress(TriggerMessageRejected):
        parse_trigger_message(SUBJECT, message)


def test_a_huge_message_is_refused_for_its_length() -> None:
    message = "Slurm trigger backup_slurmctld_failure fired on " + "a" * 5_000_000
    with pytest.raises(TriggerMessageRejected, match="longer"):
        parse_trigger_message(SUBJECT, message)
