"""The parts every message body shares: the trigger and its time, the controllers, the facts, the
next steps; each field from a request bounded."""

from __future__ import annotations

from hyperpod_ha.request_fields import MAX_ID_CHARS
from hyperpod_ha.topic_messages import kinds
from hyperpod_ha.topic_messages.sections import (
    MAX_CONTROLLERS,
    ControllerLine,
    RunStart,
    controller_lines,
    controllers_of,
    facts,
    next_steps,
    on_call_command,
)

NOW = 1_796_119_200.0  # 2026-12-01 10:00 UTC


def test_a_runs_start_reads_as_its_trigger_and_keeps_its_reason() -> None:
    start = RunStart.from_json({"source": "sns", "id": "m-1", "time": "2026-11-29T14:00:00Z"}, None, "ON")
    assert start is not None
    assert start.describe(NOW) == (
        "the controller status notification (SNS message m-1), 1 d 20 h ago (2026-11-29 14:00 UTC)"
    )
    assert start.reason == "ON"
    assert RunStart.from_json("not a trigger") is None


def test_a_trigger_without_a_time_reads_as_the_runs_start() -> None:
    start = RunStart.from_json({"source": "operator", "id": "", "time": ""}, "2026-12-01T09:59:00Z")
    assert start is not None
    assert start.describe(NOW) == "an operator's request (no id), 1 min ago (2026-12-01 09:59 UTC)"


def test_a_runs_start_is_bounded_and_reads_back() -> None:
    start = RunStart.from_json({"source": "x" * 500, "id": "i" * 5000, "time": "t" * 5000}, None, "r" * 9000)
    assert start is not None
    assert len(start.trigger.source) <= 32
    assert len(start.trigger.id) <= MAX_ID_CHARS
    assert start.trigger.time == ""
    assert len(start.reason) <= 512
    event = start.to_event()
    assert RunStart.from_json(event["trigger"], event["started_at"], event["run_reason"]) == start


def test_controllers_are_the_evidence_entries_with_an_instance_id() -> None:
    evidence = {
        "discovery": {"controllers": 2},
        "ctl1": {"instance_id": "i-1", "address": "10.0.0.1", "active": True, "slurmctld": "running"},
        "controller": {"instance_id": "i-2", "hostname": "ip-10-0-0-2", "private_ip": "10.0.0.2"},
    }
    assert controllers_of(evidence) == (
        ControllerLine("ctl1", "i-1", "10.0.0.1", None, "active, slurmctld running"),
        ControllerLine("ip-10-0-0-2", "i-2", "10.0.0.2", None, ""),
    )
    many = {f"c{i}": {"instance_id": f"i-{i}"} for i in range(100)}
    assert len(controllers_of(many)) == MAX_CONTROLLERS
    long = controllers_of({"n" * 5000: {"instance_id": "i" * 5000, "slurmctld_log": "/" * 5000}})[0]
    assert len(long.name) <= 128
    assert long.log_file is not None
    assert len(long.log_file) <= 512


def test_controller_lines_are_aligned() -> None:
    lines = controller_lines(
        [ControllerLine("ctl1", "i-0aaa", "10.0.0.1", state="active"), ControllerLine("controller-2", "i-1")]
    )
    assert lines == [
        "Controllers:",
        "  ctl1          i-0aaa  10.0.0.1  active",
        "  controller-2  i-1     -",
    ]


def test_facts_are_aligned_and_leave_out_what_is_not_known() -> None:
    assert facts([("Cluster", "ml"), ("Verdict", None), ("Triggered by", "x")]) == [
        "Cluster:      ml",
        "Triggered by: x",
    ]


def test_next_steps_are_numbered_and_a_notice_has_no_shell() -> None:
    controllers = [ControllerLine("ctl1", "i-1", target="sagemaker-cluster:abc_controller-machine-i-1")]
    steps = next_steps("ml", "eu-west-1", controllers, ("one thing",), [("Run", "https://x"), ("None", None)])
    assert steps == [
        "Next steps:",
        "  1. Open a shell on a controller:",
        "     ctl1: aws ssm start-session --region eu-west-1 "
        "--target sagemaker-cluster:abc_controller-machine-i-1",
        "  2. Look at:",
        "     - one thing",
        "     - each controller's slurmctld log (SlurmctldLogFile in slurm.conf)",
        "     - the state directory (StateSaveLocation in slurm.conf)",
        "  3. Check again once fixed: hyperpod-ha runbook start --cluster ml --region eu-west-1 --follow",
        "  4. Console:",
        "     Run: https://x",
    ]
    notice = next_steps("ml", "eu-west-1", controllers, ("one thing",), [], diagnose=False)
    assert notice == ["Next steps:", "  1. Look at:", "     - one thing"]


def test_the_runbook_command_names_the_stack_when_known() -> None:
    steps = next_steps("ml", "eu-west-1", [], (), [], stack_name="hyperpod-ha-ml")
    assert (
        "  2. Check again once fixed: hyperpod-ha runbook start --cluster ml --stack-name hyperpod-ha-ml "
        "--region eu-west-1 --follow"
    ) in steps
    assert (
        on_call_command("status", "ml", "eu-west-1", None)
        == "hyperpod-ha status --cluster ml --region eu-west-1"
    )


def test_every_kind_has_a_headline_and_a_severity_on_the_scale() -> None:
    for row in kinds.KINDS.values():
        assert row.headline
        assert row.severity in (None, *kinds.SEVERITIES)
    assert kinds.severity_of("drill-not-verified", "DOWN") == "1"
    assert kinds.severity_of("drill-not-verified", "FAILED_OVER") == "3"
    assert kinds.severity_of("rollout-failed", "DOWN") == "2"
    assert kinds.severity_of("a-kind-nobody-described") == kinds.DEFAULT_SEVERITY
