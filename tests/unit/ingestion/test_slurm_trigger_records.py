"""The failover topic's two messages told apart by subject, and what a Slurm trigger asks for: a
run with a ``slurm-trigger`` trigger, and for a full accounting buffer the accounting incident."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

import pytest

from hyperpod_ha.errors import InputRejected
from hyperpod_ha.incidents import OpenRequest
from hyperpod_ha.incidents.keys import KIND_ACCOUNTING_AT_RISK, KINDS_NOT_RESOLVED_BY_DEFAULT
from hyperpod_ha.ingestion import failover_topic, slurm_trigger_records
from hyperpod_ha.ingestion.failover_topic import parse_failover_topic_message
from hyperpod_ha.ingestion.slurm_trigger_records import (
    buffer_full_request,
    slurm_trigger_record,
    slurm_trigger_trigger,
)
from hyperpod_ha.notifications import ControllerNotification, NotificationRejected
from hyperpod_ha.runs.models import RunDecision
from hyperpod_ha.slurm import triggers
from hyperpod_ha.slurm.triggers import TriggerMessage, TriggerMessageRejected, trigger_message
from hyperpod_ha.trigger import Trigger

AT = "2026-12-06T17:00:00Z"
NOW = 1_796_576_460.0  # 2026-12-06 17:01 UTC
RUN = "arn:aws:states:us-east-1:123456789012:execution:v:run-1"


def parsed(event: str, host: str = "ctl1") -> TriggerMessage:
    message = parse_failover_topic_message(triggers.SUBJECT, trigger_message(event, host, AT))
    assert isinstance(message, TriggerMessage)
    return message


@dataclass
class Runs:
    """VerificationRuns' ``start_or_join``, recorded."""

    calls: list[tuple[str, Trigger, str]] = field(default_factory=list)

    def start_or_join(self, cluster: str, trigger: Trigger, reason: str) -> RunDecision:
        self.calls.append((cluster, trigger, reason))
        return RunDecision("started" if len(self.calls) == 1 else "joined", RUN, "lease-1")


@dataclass
class Incidents:
    asked: list[dict[str, Any]] = field(default_factory=list)

    def open(self, request: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(request)
        return {"ops_item_id": "oi-0123456789ab", "created": True}


# --- told apart by subject ---------------------------------------------------------------------


def test_each_subject_goes_to_its_own_parser() -> None:
    status = parse_failover_topic_message(
        "Slurm Controller Status Change", "Slurm Controller is OFF (10.1.4.5, Backup Node)"
    )
    assert status == ControllerNotification("OFF", "10.1.4.5", "backup")
    message = parsed("backup_slurmctld_failure")
    assert (message.event.name, message.host, message.at) == ("backup_slurmctld_failure", "ctl1", AT)
    assert failover_topic.TRIGGER_SUBJECT == triggers.SUBJECT


@pytest.mark.parametrize(
    ("subject", "message", "error", "reason"),
    [
        ("Hello", "Slurm Controller is ON, (10.1.2.3, Primary Node)", NotificationRejected, "neither"),
        (None, trigger_message("backup_slurmctld_failure", "ctl1", AT), NotificationRejected, "neither"),
        ("Slurm Trigger" + " " * 10_000, "x", NotificationRejected, "neither"),
        # Each subject is held to its own form: a trigger under the ON/OFF subject is not one.
        (
            "Slurm Controller Status Change",
            trigger_message("backup_slurmctld_failure", "ctl1", AT),
            NotificationRejected,
            "ON|OFF",
        ),
        (
            "Slurm Trigger",
            "Slurm Controller is ON, (10.1.2.3, Primary Node)",
            TriggerMessageRejected,
            "not 'Slurm trigger",
        ),
        ("Slurm Trigger", "Slurm trigger fini fired on ctl1 at " + AT, TriggerMessageRejected, "installs"),
    ],
)
def test_anything_else_is_a_typed_reject_with_its_reason(
    subject: str | None, message: str, error: type[InputRejected], reason: str
) -> None:
    with pytest.raises(error, match=reason) as raised:
        parse_failover_topic_message(subject, message)
    assert isinstance(raised.value, InputRejected)


def test_the_functions_init_stays_without_the_slurm_package() -> None:
    # ControllerStatusFunction imports it only for a record with the trigger's subject.
    code = "import sys, hyperpod_ha.ingestion.function; print('hyperpod_ha.slurm' in sys.modules)"
    answer = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert answer.stdout.strip() == "False"


# --- the run -------------------------------------------------------------------------------------


def test_a_trigger_starts_the_run_with_its_event_host_and_time() -> None:
    runs, incidents = Runs(), Incidents()
    record = slurm_trigger_record(
        runs,  # type: ignore[arg-type]
        "ml-cluster",
        "m-1",
        parsed("backup_slurmctld_failure"),
        incidents.open,
    )
    ((cluster, trigger, reason),) = runs.calls
    assert cluster == "ml-cluster"
    assert trigger == Trigger(
        "slurm-trigger",
        "m-1",
        {"event": "backup_slurmctld_failure", "host": "ctl1", "at": AT},
        "2026-12-06T17:00:00.000Z",
    )
    assert trigger.key == "slurm-trigger:m-1"
    assert reason == f"Slurm's trigger backup_slurmctld_failure fired on ctl1 at {AT}"
    assert record == {
        "message_id": "m-1",
        "outcome": "started",
        "source": "slurm-trigger",
        "event": "backup_slurmctld_failure",
        "host": "ctl1",
        "at": AT,
        "execution_arn": RUN,
    }
    assert incidents.asked == []  # a verify event opens nothing by itself


def test_the_run_reads_its_trigger_as_slurms_with_the_event() -> None:
    trigger = slurm_trigger_trigger("m-1", parsed("backup_slurmctld_failure"))
    assert trigger.describe(NOW) == (
        "Slurm's trigger backup_slurmctld_failure (SNS message m-1), 1 min ago (2026-12-06 17:00 UTC)"
    )
    # As the run's input carries it back to a message: the event kept, the rest the run's.
    again = Trigger.from_json(json.loads(json.dumps(trigger.to_json())))
    assert again is not None
    assert again.describe(NOW) == trigger.describe(NOW)


# --- a full accounting buffer --------------------------------------------------------------------


def test_a_full_accounting_buffer_starts_the_run_and_opens_the_accounting_incident() -> None:
    runs, incidents = Runs(), Incidents()
    record = slurm_trigger_record(
        runs,  # type: ignore[arg-type]
        "ml-cluster",
        "m-2",
        parsed("primary_slurmctld_acct_buffer_full", "ctl2"),
        incidents.open,
    )
    assert len(runs.calls) == 1
    (asked,) = incidents.asked
    assert asked == buffer_full_request(
        "ml-cluster", "m-2", parsed("primary_slurmctld_acct_buffer_full", "ctl2"), RUN
    )
    assert asked["execution_id"] == RUN  # the run that checks the controllers
    assert record["incident"] == {"kind": "accounting-at-risk", "ops_item_id": "oi-0123456789ab"}


def test_the_incident_request_is_incident_functions_own() -> None:
    event = buffer_full_request("ml-cluster", "m-2", parsed("primary_slurmctld_acct_buffer_full", "ctl2"))
    request = OpenRequest.from_event(event)
    assert (request.kind, request.verdict) == ("accounting-at-risk", "")
    assert request.problem == "slurmctld's accounting buffer is full on ctl2: new records are dropped"
    assert request.reasons[0].startswith(
        f"Slurm's trigger primary_slurmctld_acct_buffer_full fired on ctl2 at {AT}: "
    )
    assert any("do not fail over" in reason for reason in request.reasons)
    assert request.run_start is not None
    assert request.run_start.describe(NOW).startswith(
        "Slurm's trigger primary_slurmctld_acct_buffer_full (SNS message m-2)"
    )
    # Without the run: one token per message (a redelivery finds the same incident).
    again = buffer_full_request("ml-cluster", "m-2", parsed("primary_slurmctld_acct_buffer_full"))
    other = buffer_full_request("ml-cluster", "m-3", parsed("primary_slurmctld_acct_buffer_full"))
    assert again["execution_id"] == event["execution_id"] != other["execution_id"]
    assert event["execution_id"].startswith("slurm-trigger:")


def test_a_silenced_or_odd_answer_gives_no_ops_item_id() -> None:
    runs = Runs()
    record = slurm_trigger_record(
        runs,  # type: ignore[arg-type]
        "ml-cluster",
        "m-4",
        parsed("primary_slurmctld_acct_buffer_full"),
        lambda request: {"ops_item_id": "x" * 5000},
    )
    assert record["incident"] == {"kind": "accounting-at-risk", "ops_item_id": None}


def test_a_failed_incident_raises_after_the_run_so_the_delivery_is_retried() -> None:
    runs = Runs()

    def failing(request: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("IncidentFunction failed: Throttled")

    with pytest.raises(RuntimeError, match="Throttled"):
        slurm_trigger_record(
            runs,  # type: ignore[arg-type]
            "ml-cluster",
            "m-5",
            parsed("primary_slurmctld_acct_buffer_full"),
            failing,
        )
    assert len(runs.calls) == 1  # the retry finds its own lease: the same run


def test_the_kind_is_the_incidents_own_and_no_verified_run_resolves_it() -> None:
    assert slurm_trigger_records.KIND_ACCOUNTING_AT_RISK == KIND_ACCOUNTING_AT_RISK
    assert KIND_ACCOUNTING_AT_RISK in KINDS_NOT_RESOLVED_BY_DEFAULT
