from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.notifications import (
    MAX_MESSAGE_CHARS,
    SUBJECT,
    ControllerNotification,
    NotificationRejected,
    parse_controller_notification,
)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "Slurm Controller is ON, (10.1.2.3, Primary Node)",
            ControllerNotification("ON", "10.1.2.3", "primary"),
        ),
        (
            "Slurm Controller is OFF (10.1.4.5, Backup Node)",
            ControllerNotification("OFF", "10.1.4.5", "backup"),
        ),
        (
            "Slurm Controller is ON (10.1.2.3, Backup Node)",
            ControllerNotification("ON", "10.1.2.3", "backup"),
        ),
        (
            "Slurm Controller is OFF, (10.1.4.5, Primary Node)",
            ControllerNotification("OFF", "10.1.4.5", "primary"),
        ),
        (
            "  Slurm  Controller is ON ,  ( 10.1.2.3 ,  Primary Node )  \n",
            ControllerNotification("ON", "10.1.2.3", "primary"),
        ),
        (
            "Slurm Controller is OFF (fd00::12, Backup Node)\n",
            ControllerNotification("OFF", "fd00::12", "backup"),
        ),
    ],
)
def test_both_observed_shapes_parse(message: str, expected: ControllerNotification) -> None:
    assert parse_controller_notification(SUBJECT, message) == expected


@pytest.mark.parametrize(
    ("subject", "message", "reason"),
    [
        ("Something else", "Slurm Controller is ON, (10.1.2.3, Primary Node)", "subject"),
        (None, "Slurm Controller is ON, (10.1.2.3, Primary Node)", "subject"),
        (SUBJECT, "", "empty"),
        (SUBJECT, None, "empty"),
        (SUBJECT, "Slurm Controller is MAYBE (10.1.2.3, Primary Node)", "is not"),
        (SUBJECT, "Slurm Controller is ON (10.1.2.3, Login Node)", "is not"),
        (SUBJECT, "Slurm Controller is ON (10.1.2.3 Primary Node)", "is not"),
        (SUBJECT, "Slurm Controller is ON (ctl1, Primary Node)", "IP address"),
        (SUBJECT, "Slurm Controller is ON (10.1.2.300, Primary Node)", "IP address"),
        (SUBJECT, '{"status": "ON", "address": "10.1.2.3"}', "is not"),
        (SUBJECT, "Slurm Controller is ON, (10.1.2.3, Primary Node) and more", "is not"),
    ],
)
def test_anything_else_is_rejected_with_a_reason(
    subject: str | None, message: str | None, reason: str
) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_controller_notification(subject, message)


@given(st.text(max_size=300))
def test_arbitrary_text_never_crashes(message: str) -> None:
    try:
        parsed = parse_controller_notification(SUBJECT, message)
    except NotificationRejected:
        return
    assert parsed.status in ("ON", "OFF")
    assert parsed.role in ("primary", "backup")


@pytest.mark.parametrize(
    "address", ["fe80::1%eth0", "fe80::1%25eth0", "fd00::12%x;rm", "::1%0"], ids=lambda a: a.split("%")[1]
)
def test_an_ipv6_zone_id_is_rejected(address: str) -> None:
    with pytest.raises(NotificationRejected, match=r"zone id|IP address"):
        parse_controller_notification(SUBJECT, f"Slurm Controller is ON ({address}, Primary Node)")


@pytest.mark.parametrize(
    "message",
    [
        "Slurm Controller is ON," + " " * 100_000 + "(10.1.2.3, Primary Node)",
        "Slurm Controller is ON, (10.1.2.3, Primary Node)" + " " * (MAX_MESSAGE_CHARS + 1) + "x",
        " " * (MAX_MESSAGE_CHARS + 1) + "Slurm Controller is OFF (10.1.4.5, Backup Node)",
    ],
    ids=["whitespace-run", "trailing", "leading"],
)
def test_a_message_longer_than_any_real_one_is_rejected_before_matching(message: str) -> None:
    # Each of these took the old pattern seconds (quadratic backtracking on whitespace runs).
    with pytest.raises(NotificationRejected, match=f"longer than {MAX_MESSAGE_CHARS}"):
        parse_controller_notification(SUBJECT, message)


def test_whitespace_up_to_the_bound_still_parses() -> None:
    padding = " \t\n" * ((MAX_MESSAGE_CHARS - 60) // 6)
    message = f"{padding}Slurm Controller is ON,{padding}(10.1.2.3, Primary Node)"
    assert len(message) <= MAX_MESSAGE_CHARS
    assert parse_controller_notification(SUBJECT, message) == ControllerNotification(
        "ON", "10.1.2.3", "primary"
    )


def test_a_huge_subject_is_rejected() -> None:
    with pytest.raises(NotificationRejected, match="subject"):
        parse_controller_notification(
            " " * 1_000_000 + SUBJECT, "Slurm Controller is ON (10.1.2.3, Primary Node)"
        )
