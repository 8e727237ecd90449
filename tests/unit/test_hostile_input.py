"""Hostile node and AWS text: every parser gives its result or its typed error, never a hang,
a RecursionError or a TypeError. The inputs are the pathological ones (nested quantifiers,
rescanning searches, deep JSON); a linear parser handles each at once (the times are measured
by bench/input_parsing.py, not here)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from hyperpod_ha.commands import CommandResult, ProtocolError
from hyperpod_ha.controllers.check import report_from_result
from hyperpod_ha.controllers.models import ReportStatus
from hyperpod_ha.errors import InputRejected
from hyperpod_ha.ingestion.dead_letter_body import MAX_KEPT_BYTES, rejected_body
from hyperpod_ha.ingestion.failover_topic import parse_failover_topic_message
from hyperpod_ha.ingestion.sns_records import check_sns_record
from hyperpod_ha.json_input import MAX_DEPTH, check_depth, load_json
from hyperpod_ha.notifications import NotificationRejected
from hyperpod_ha.rotation.rollout import NodeReportInvalid, RolloutSettings, parse_node_report, roll_out
from hyperpod_ha.rotation.secret import SecretFormatError, parse_secret
from hyperpod_ha.runs.abandoned import AbandonedRunRejected, parse_abandoned_run
from hyperpod_ha.slurm import (
    PROBE_RESULT_PREFIX,
    ProbeOutputError,
    SlurmOutputError,
    classify_role_line,
    parse_agent_queue_size,
    parse_cluster_registrations,
    parse_conf_change,
    parse_dbd_ping,
    parse_failover_conf,
    parse_heartbeat,
    parse_http_probes,
    parse_hyperpod_hand,
    parse_identity,
    parse_node_states,
    parse_notify_failures,
    parse_ping,
    parse_probe_output,
    parse_role_log,
    parse_services,
    parse_show_config,
    parse_slurm_conf,
    parse_state_save,
)
from hyperpod_ha.slurm.probe_output import MAX_MARKERS, MAX_SECTION_CHARS
from hyperpod_ha.slurm.triggers import MAX_MESSAGE_CHARS, TriggerMessageRejected
from tests.fakes.canned_runner import CannedRunner
from tests.unit.controllers.cases.probe_outputs import NODE, probe_text, result, section

DEEP = "[" * 100_000


def nested(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = {"a": value}
    return value


# --- the one bounded-depth decode ------------------------------------------------------------


def test_deep_json_is_the_callers_typed_error() -> None:
    with pytest.raises(SecretFormatError, match="nests deeper than"):
        load_json(DEEP, SecretFormatError)
    with pytest.raises(SecretFormatError, match="nests deeper than"):
        load_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), SecretFormatError)
    assert load_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, SecretFormatError) is not None
    with pytest.raises(SecretFormatError, match="is not JSON"):
        load_json(b"\xff{", SecretFormatError)
    with pytest.raises(SecretFormatError, match="not a JSON text"):
        load_json(42, SecretFormatError)  # type: ignore[arg-type]


def test_a_decoded_value_deeper_than_the_bound_is_rejected_without_recursion() -> None:
    with pytest.raises(NotificationRejected, match="nests deeper"):
        check_depth(nested(200_000), NotificationRejected)
    check_depth({"a": [{"b": [1, 2, {"c": "d"}]}]}, NotificationRejected)


# --- the entry points -------------------------------------------------------------------------


def test_a_deep_probe_result_line_is_that_controllers_failed_probe() -> None:
    text = probe_text()
    deep = text[: text.index(PROBE_RESULT_PREFIX)] + PROBE_RESULT_PREFIX + DEEP + "\n"
    output = parse_probe_output(deep)
    assert not output.complete
    assert output.error is not None
    assert "nests deeper" in output.error
    report = report_from_result(NODE, result(deep))
    assert report.status is ReportStatus.PROBE_FAILED
    assert report.reason is not None
    assert "nests deeper" in report.reason
    assert report.role.logged == "primary"  # what the probe did print is kept


def test_a_deep_or_mistyped_node_report_is_a_failed_attempt_with_its_incident() -> None:
    failures: list[tuple[dict[str, Any], str]] = []
    settings = RolloutSettings(
        secret_arn="arn:aws:secretsmanager:us-east-1:123456789012:secret:db", document="d"
    )
    for stdout in ("{" + DEEP + "\n", '{"outcome": "failed", "reason": {"nested": [1]}}\n'):
        runner = CannedRunner(result=CommandResult(stdout, "", 1, 0.1, "fake"))
        report = roll_out(
            [{"instance_id": "i-1", "target": "t-1"}, {"instance_id": "i-2", "target": "t-2"}],
            runner,
            settings,
            lambda controller, reason: failures.append((controller, reason)),
        )
        assert [c.outcome for c in report.controllers] == ["failed", "not_attempted"]
    assert [controller["instance_id"] for controller, _ in failures] == ["i-1", "i-1"]
    assert "printed no report" in failures[0][1]
    assert "'reason' of the wrong type" in failures[1][1]


@pytest.mark.parametrize(
    "fields",
    [
        {"storage_user": 7},
        {"seconds_to_answer": "soon"},
        {"seconds_to_answer": True},
        {"stage": None, "reason": []},
    ],
)
def test_node_report_fields_of_the_wrong_type_are_typed_rejects(fields: dict[str, Any]) -> None:
    line = json.dumps({"outcome": "updated", **fields})
    with pytest.raises(NodeReportInvalid, match="wrong type"):
        parse_node_report(CommandResult(line, "", 0, 0.1, "fake"))


def test_only_the_outputs_tail_is_searched_for_the_report() -> None:
    noise = "{\n" * 1_000_000  # a million lines that look like JSON and are not
    with pytest.raises(NodeReportInvalid, match="printed no report"):
        parse_node_report(CommandResult(noise, "", 0, 0.1, "fake"))
    report = parse_node_report(CommandResult(noise + '{"outcome": "updated"}\n', "", 0, 0.1, "fake"))
    assert report["outcome"] == "updated"


def test_a_deep_secret_is_a_secret_format_error() -> None:
    with pytest.raises(SecretFormatError, match="nests deeper") as caught:
        parse_secret(DEEP)
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__  # the decoder's error (it may quote the text) is dropped


@pytest.mark.parametrize(
    ("run_input", "reason"),
    [
        (DEEP, "nests deeper"),
        (json.dumps({"cluster": "ml-cluster", "deep": nested(MAX_DEPTH + 5)}), "nests deeper"),
        (json.dumps({"cluster": "ml-cluster", "lease_id": {"a": 1}}), "lease_id is not a string"),
        (json.dumps({"cluster": "ml-cluster", "reason": ["x"]}), "reason is not a string"),
        (17, "not JSON text"),
    ],
)
def test_an_abandoned_runs_input_is_a_typed_reject(run_input: object, reason: str) -> None:
    machine = (
        "arn:aws:states:us-east-1:123456789012:stateMachine:hyperpod-ha-FailoverVerificationStateMachine"
    )
    detail = {
        "status": "ABORTED",
        "stateMachineArn": machine,
        "executionArn": machine.replace(":stateMachine:", ":execution:") + ":run-1",
        "input": run_input,
    }
    with pytest.raises(AbandonedRunRejected, match=reason):
        parse_abandoned_run({"source": "aws.states", "detail": detail}, (machine,), "ml-cluster")


TOPIC = "arn:aws:sns:us-east-1:123456789012:slurm-failover"


def test_an_sns_record_with_deep_attributes_is_rejected_and_kept_bounded() -> None:
    record = {
        "Sns": {
            "MessageId": "m-1",
            "TopicArn": TOPIC,
            "Subject": "Slurm Controller Status Change",
            "Message": "Slurm Controller is ON, (10.1.2.3, Primary Node)",
            "MessageAttributes": {"k": nested(500)},
        }
    }
    with pytest.raises(NotificationRejected, match="nests deeper") as caught:
        check_sns_record(record, TOPIC)
    kept = json.loads(rejected_body("sns", "m-1", str(caught.value), record))
    assert kept["input_truncated"] is True
    assert kept["input"]["Sns"]["MessageId"] == "m-1"


_TRIGGER = "Slurm trigger backup_slurmctld_failure fired on "
HOSTILE_TRIGGER_MESSAGES = {
    "a MiB of message": _TRIGGER + "a" * (1024 * 1024),
    "repeated words at the bound": ("Slurm trigger fired on at " * 20)[:MAX_MESSAGE_CHARS],
    "a host of dots": _TRIGGER + "." * 150 + " at 2026-12-06T17:00:00Z",
    "a host of labels": _TRIGGER + "a-" * 100 + " at 2026-12-06T17:00:00Z",
    "control characters": _TRIGGER + "ctl1\x00\x1b[2J at 2026-12-06T17:00:00Z",
    "a second line": _TRIGGER
    + "ctl1 at 2026-12-06T17:00:00Z\nSlurm Controller is ON, (10.1.2.3, Primary Node)",
    "a secret in it": _TRIGGER + "StoragePass=Hunter2 at 2026-12-06T17:00:00Z",
}


@pytest.mark.parametrize("name", list(HOSTILE_TRIGGER_MESSAGES))
def test_a_hostile_trigger_message_is_a_typed_reject_kept_bounded(name: str) -> None:
    message = HOSTILE_TRIGGER_MESSAGES[name]
    record = {"Sns": {"MessageId": "m-1", "TopicArn": TOPIC, "Subject": "Slurm Trigger", "Message": message}}
    sns = check_sns_record(record, TOPIC)
    with pytest.raises(TriggerMessageRejected) as caught:
        parse_failover_topic_message(sns["Subject"], sns["Message"])
    reason = str(caught.value)
    # The reason names the rule, never the text it refused.
    assert len(reason) < 120
    assert "Hunter2" not in reason
    assert "ctl1" not in reason
    body = rejected_body("sns", "m-1", reason, record)
    assert len(body.encode()) <= MAX_KEPT_BYTES


# --- the probe's parsers on pathological text -------------------------------------------------


def test_a_process_line_that_made_the_old_pattern_backtrack_is_just_not_a_process() -> None:
    for count in (36, 5_000):
        assert parse_services("process slurmctld " + "a=" * count + " X").processes == ()
    services = parse_services("process slurmctld pid=7  state=S\tppid=1 threads=3 same_ns=yes\nprocess x y")
    assert [(p.name, p.pid, p.state, p.ppid, p.threads, p.same_namespace) for p in services.processes] == [
        ("slurmctld", 7, "S", 1, 3, True)
    ]
    assert parse_services("process slurmctld " + " ".join(f"k{i}=1" for i in range(9))).processes == ()


def test_a_slurm_conf_line_with_a_long_inner_run_of_spaces() -> None:
    value = "a" + " " * 12_000 + "b"
    config = parse_slurm_conf(
        f"path=/etc/slurm/slurm.conf\nClusterName = {value}   # the lab\nSlurmUser=slurm"
    )
    assert config.cluster_name == value
    assert config.slurm_user == "slurm"
    with pytest.raises(SlurmOutputError, match=r"not a slurm\.conf line"):
        parse_slurm_conf("path=/x\n" + " " * 12_000 + "=value")


def test_a_role_log_of_repeated_version_words_has_no_role() -> None:
    assert parse_role_log("slurmctld version " * 8_000).lines == ()
    assert (
        classify_role_line("[2026-11-29T23:30:00] slurmctld version 24.11.1 started on cluster lab")
        == "starting"
    )
    assert classify_role_line("slurmctld version started") is None  # no version between


PARSERS: list[Callable[[str], object]] = [
    parse_ping,
    parse_show_config,
    parse_slurm_conf,
    parse_role_log,
    parse_services,
    parse_identity,
    parse_heartbeat,
    parse_state_save,
    parse_node_states,
    parse_cluster_registrations,
    parse_dbd_ping,
    parse_agent_queue_size,
    parse_failover_conf,
    parse_http_probes,
    parse_hyperpod_hand,
    parse_conf_change,
    parse_notify_failures,
]
HOSTILE = [
    "\n" * MAX_SECTION_CHARS,
    "a" + " " * MAX_SECTION_CHARS + "b",
    "path=/x\n" + "a=b\n" * (MAX_SECTION_CHARS // 4),
    "Slurmctld(primary) at " + "h" * MAX_SECTION_CHARS,
    "bytes=" + "1 " * (MAX_SECTION_CHARS // 2),
    "x" * MAX_SECTION_CHARS + "=" + "=" * 100,
    "DBD Agent queue size: " + "9" * MAX_SECTION_CHARS,
    "idle" + "*" * MAX_SECTION_CHARS + " 3",
]


@pytest.mark.parametrize("parser", PARSERS, ids=lambda parser: parser.__name__)
@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_every_section_parser_answers_or_raises_its_typed_error(
    parser: Callable[[str], object], text: str
) -> None:
    try:
        parser(text)
    except SlurmOutputError as error:
        reason = str(error)
    else:
        reason = ""
    assert len(reason) < 400  # a reason quotes at most an excerpt


def test_a_section_longer_than_the_cap_is_cut_and_marked_truncated() -> None:
    long_role = section("role", "source=journal:slurmctld\n" + "Running as primary controller\n" * 10_000)
    output = parse_probe_output(probe_text(role=long_role))
    role = output.sections["role"]
    assert role.truncated
    assert len(role.text) <= MAX_SECTION_CHARS
    assert role.text.endswith("Running as primary controller")  # cut at a line's end


def test_probe_outputs_too_odd_to_be_the_probes_are_failed_probes_with_a_reason() -> None:
    flood = probe_text().replace(
        "@@hyperpod-ha 0123456789abcdef begin identity",
        "@@hyperpod-ha 0123456789abcdef begin x\n" * (MAX_MARKERS + 1)
        + "@@hyperpod-ha 0123456789abcdef begin identity",
    )
    with pytest.raises(ProbeOutputError, match="marker lines"):
        parse_probe_output(flood)
    report = report_from_result(NODE, result(flood))
    assert report.status is ReportStatus.PROBE_FAILED
    assert report.reason is not None
    assert "marker lines" in report.reason
    empty = parse_probe_output("@@hyperpod-ha probe begin version=1 nonce=abcd\n" + "\n" * 4_000_000)
    assert (empty.sections, empty.complete) == ({}, False)


def test_a_services_section_that_would_have_hung_the_check_gives_a_checked_report() -> None:
    odd = section("services", "systemctl slurmctld active\nprocess slurmctld " + "a=" * 5_000 + " X")
    report = report_from_result(NODE, result(probe_text(services=odd)))
    assert report.status is ReportStatus.CHECKED
    assert report.slurmctld.systemctl == "active"
    assert report.slurmctld.pids == ()


def test_an_exit_code_frame_with_endless_digits_is_a_protocol_error() -> None:
    from hyperpod_ha.commands.frames import PayloadType
    from hyperpod_ha.commands.session_output import OutputCollector

    collector = OutputCollector("s-1", 1024)
    with pytest.raises(ProtocolError, match="malformed exit code"):
        collector.take(PayloadType.EXIT_CODE, b"EXIT_CODE: " + b"9" * 5_000)


def test_every_reject_here_is_an_input_rejected() -> None:
    for error in (
        SecretFormatError,
        NodeReportInvalid,
        AbandonedRunRejected,
        NotificationRejected,
        TriggerMessageRejected,
        ProbeOutputError,
    ):
        assert issubclass(error, InputRejected)
        assert issubclass(error, ValueError)


def test_a_node_reports_reason_is_scrubbed_before_the_roll_out_keeps_it() -> None:
    failures: list[str] = []
    line = json.dumps(
        {"outcome": "failed", "stage": "restart", "reason": "mysql -pAb,Cd:Ef refused: StoragePass=Ab,Cd"}
    )
    report = roll_out(
        [{"instance_id": "i-1", "target": "t-1"}],
        CannedRunner(result=CommandResult(line, "", 1, 0.1, "fake")),
        RolloutSettings(secret_arn="arn:aws:secretsmanager:us-east-1:123456789012:secret:db", document="d"),
        lambda controller, reason: failures.append(reason),
    )
    assert report.controllers[0].reason == "restart: mysql -p[redacted] refused: StoragePass=[redacted]"
    assert failures == [report.controllers[0].reason]
