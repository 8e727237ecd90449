"""EvaluateVerdictFunction's handler on the reports the health check returns."""

from __future__ import annotations

import datetime as dt
import json
from types import ModuleType
from typing import Any

import pytest

from hyperpod_ha.commands import CommandResult
from hyperpod_ha.controllers.check import check_controller, report_from_result
from hyperpod_ha.controllers.models import Controller, ReportStatus
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.slurm import ProbeSection
from hyperpod_ha.verdict import ConvergenceInputError, VerdictInputError, VerdictPolicy
from hyperpod_ha_dev import CAPTURES
from hyperpod_ha_dev.embedded.functions import LambdaContext
from tests.conftest import load_function_module
from tests.fakes.probe_output import format_probe_output
from tests.fakes.unreachable_runner import UnreachableRunner

ADDRESSES = {"ctl1": "10.214.0.11", "ctl2": "10.214.0.12"}


def capture(name: str) -> str:
    return (CAPTURES / name).read_text().rstrip("\n")


def node(name: str) -> Controller:
    return Controller(
        instance_id=f"i-0{name}000000000000",
        group="controller-machine",
        status="Running",
        private_ip=ADDRESSES[name],
        hostname=name,
        target=f"sagemaker-cluster:hplab0000001_controller-machine-i-0{name}000000000000",
    )


def report(
    name: str, log: str, ping: str, writer: int, dbd: str, sdiag: ProbeSection | None = None
) -> dict[str, Any]:
    """A health-check report (JSON) made from captured output (``sdiag``: that section too)."""

    def s(section: str, text: str, rc: int = 0) -> ProbeSection:
        return ProbeSection(name=section, text=text, exit_code=rc, millis=5, timed_out=False, truncated=False)

    data = (CAPTURES / f"heartbeat_writer{writer}.bin").read_bytes()
    beat = int.from_bytes(data[:8], "big")
    services = "systemctl slurmctld active\nprocess slurmctld pid=10 state=S ppid=1 threads=17"
    output = format_probe_output(
        [
            s("identity", f"hostname={name}\naddress={ADDRESSES[name]}\nnow={beat + 1}"),
            s("services", services),
            s("config", capture("show_config_lab.txt") + "\n" + capture("show_config_accounting_lab.txt")),
            s("ping", capture(ping)),
            s("sinfo", capture("sinfo_mixed_idle.txt")),
            s("dbd_clusters", capture(dbd)),
            s("role", "now_local=2026-11-29T23:31:00\nsource=file:/l\n" + capture(log)),
            s(
                "heartbeat",
                f"path=/s/heartbeat\nexists=yes\nsize=16\nmtime={beat}\nnow={beat + 1}\n"
                f"bytes={' '.join(map(str, data))}",
            ),
            s("state_save", "path=/s\nexists=yes\nmount_target=/srv\nfstype=lustre\nwritable=yes"),
            *([sdiag] if sdiag else []),
        ]
    )
    result = CommandResult(output, "", 0, 1.0, "test")
    return json.loads(json.dumps(report_from_result(node(name), result).to_json()))


def unreachable(name: str) -> dict[str, Any]:
    checked = check_controller(node(name), UnreachableRunner(), document="d", deadline_seconds=60)
    assert checked.status is ReportStatus.UNREACHABLE
    return checked.to_json()


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.delenv("EXPECTED_STATE_FSTYPES", raising=False)
    return load_function_module("evaluate_verdict", fresh=True)


def invoke(app: ModuleType, event: Any) -> dict[str, Any]:
    context = LambdaContext(
        "EvaluateVerdictFunction", "arn:aws:lambda:us-east-1:123456789012:function:ev", 128, 10
    )
    result: dict[str, Any] = app.lambda_handler(event, context)
    return json.loads(json.dumps(result))


def test_healthy(app: ModuleType) -> None:
    out = invoke(
        app,
        {
            "reports": [
                report(
                    "ctl1",
                    "slurmctld_log_ctl1_primary.txt",
                    "ping_all_up.txt",
                    0,
                    "sacctmgr_cluster_ctl1.txt",
                ),
                report(
                    "ctl2",
                    "slurmctld_log_ctl2_standby.txt",
                    "ping_all_up.txt",
                    0,
                    "sacctmgr_cluster_ctl1.txt",
                ),
            ],
            "attempt": 1,
        },
    )
    assert (out["verdict"], out["verified"], out["active_controller"], out["configured_primary"]) == (
        "HEALTHY",
        True,
        "ctl1",
        "ctl1",
    )
    assert out["attempt"] == 1
    assert out["reason_codes"][0] == "primary-active"
    assert out["reasons"][0].startswith("ctl1 (configured primary) is active")
    assert set(out["evidence"]) == {"ctl1", "ctl2"}
    assert out["evidence"]["ctl2"]["logged_role"] == "standby"


def test_a_runs_verdict_tells_the_early_warnings_and_weighs_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXPECTED_STATE_FSTYPES", raising=False)
    monkeypatch.setenv("OVERLOAD_ROUND_TRIP_MS", "1000")  # the watchdog's parameter, the run's too
    app = load_function_module("evaluate_verdict", fresh=True)

    def reports(sdiag_ms: int) -> list[dict[str, Any]]:
        # The lab's active ctl1 as captured (sdiag -t, 24.11), answering sdiag in sdiag_ms.
        sdiag = ProbeSection("sdiag", capture("sdiag_24_11.txt"), 0, sdiag_ms, False, False)
        primary = ("slurmctld_log_ctl1_primary.txt", "ping_all_up.txt", 0, "sacctmgr_cluster_ctl1.txt")
        standby = ("slurmctld_log_ctl2_standby.txt", "ping_all_up.txt", 0, "sacctmgr_cluster_ctl1.txt")
        return [report("ctl1", *primary, sdiag=sdiag), report("ctl2", *standby)]

    quiet = invoke(app, {"reports": reports(40), "attempt": 1})
    slow = invoke(app, {"reports": reports(1500), "attempt": 1})
    assert quiet["warnings"] == []
    (warning,) = slow["warnings"]
    assert (warning["kind"], warning["controller"], warning["codes"]) == (
        "controller-overloaded",
        "ctl1",
        ["overloaded-round-trip"],
    )
    assert "sdiag answered in 1500 ms (1000 ms)" in warning["headline"]
    assert warning["figures"]["round_trip_ms"] == 1500
    # Told beside the verdict, never weighed by it: the same verdict, reasons and next step.
    assert {k: v for k, v in slow.items() if k != "warnings"} == {
        k: v for k, v in quiet.items() if k != "warnings"
    }
    assert slow["verdict"] == "HEALTHY"


def test_failed_over_with_the_old_primary_unreachable(app: ModuleType) -> None:
    out = invoke(
        app,
        {
            "reports": [
                unreachable("ctl1"),
                report(
                    "ctl2",
                    "slurmctld_log_ctl2_takeover.txt",
                    "ping_primary_down.txt",
                    1,
                    "sacctmgr_cluster_ctl2.txt",
                ),
            ]
        },
    )
    assert (out["verdict"], out["verified"], out["active_controller"]) == ("FAILED_OVER", True, "ctl2")
    assert out["attempt"] is None
    assert out["evidence"]["ctl1"]["status"] == "UNREACHABLE"


def test_a_caught_health_check_error_is_never_verified(app: ModuleType) -> None:
    caught = {"Error": "Lambda.Unknown", "Cause": "The function timed out"}
    out = invoke(
        app,
        {
            "reports": [
                report(
                    "ctl1",
                    "slurmctld_log_ctl1_primary.txt",
                    "ping_all_up.txt",
                    0,
                    "sacctmgr_cluster_ctl1.txt",
                ),
                caught,
            ]
        },
    )
    assert out["verdict"] == "DEGRADED"
    assert out["verified"] is False
    given = zip(out["reason_codes"], out["reasons"], strict=True)
    assert any(
        code == "check-gave-no-evidence" and "health check failed: Lambda.Unknown" in text
        for code, text in given
    )


def test_no_reports_is_unknown(app: ModuleType) -> None:
    out = invoke(app, {"reports": []})
    assert (out["verdict"], out["verified"], out["active_controller"]) == ("UNKNOWN", False, None)


@pytest.mark.parametrize(
    "event", [{}, {"reports": "all"}, {"reports": [], "attempt": "2"}, {"reports": [], "attempt": True}]
)
def test_malformed_input_is_rejected(app: ModuleType, event: dict[str, Any]) -> None:
    with pytest.raises(VerdictInputError):
        invoke(app, event)


def test_the_output_is_bounded(app: ModuleType) -> None:
    many = [unreachable("ctl1")] * 50
    out = invoke(app, {"reports": many})
    assert out["verdict"] == "UNKNOWN"
    assert len(json.dumps(out)) <= 32 * 1024


def test_an_expected_file_system_type_for_state(monkeypatch: pytest.MonkeyPatch) -> None:
    reports = [
        report("ctl1", "slurmctld_log_ctl1_primary.txt", "ping_all_up.txt", 0, "sacctmgr_cluster_ctl1.txt"),
        report("ctl2", "slurmctld_log_ctl2_standby.txt", "ping_all_up.txt", 0, "sacctmgr_cluster_ctl1.txt"),
    ]
    monkeypatch.setenv("EXPECTED_STATE_FSTYPES", "lustre, nfs4")
    app = load_function_module("evaluate_verdict", fresh=True)
    assert invoke(app, {"reports": reports})["verdict"] == "HEALTHY"
    monkeypatch.setenv("EXPECTED_STATE_FSTYPES", "nfs4")
    app = load_function_module("evaluate_verdict", fresh=True)  # settings are read once per container
    out = invoke(app, {"reports": reports})
    assert out["verdict"] == "DEGRADED"
    said = dict(zip(out["reasons"], out["reason_codes"], strict=True))
    assert said["ctl1: StateSaveLocation is on lustre, expected nfs4"] == "state-save-filesystem"


def test_the_settings_default_when_missing_and_name_a_malformed_variable() -> None:
    assert VerdictPolicy.from_environment({}) == VerdictPolicy()
    given = VerdictPolicy.from_environment({"EXPECTED_STATE_FSTYPES": " lustre,nfs4, "})
    assert given.expected_state_fstypes == {"lustre", "nfs4"}
    with pytest.raises(ConfigurationError, match="EXPECTED_STATE_FSTYPES"):
        VerdictPolicy.from_environment({"EXPECTED_STATE_FSTYPES": "lustre nfs4"})


def test_a_malformed_setting_fails_the_first_invocation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPECTED_STATE_FSTYPES", "lustre;nfs4")
    app = load_function_module("evaluate_verdict", fresh=True)
    with pytest.raises(ConfigurationError, match="EXPECTED_STATE_FSTYPES"):
        invoke(app, {"reports": []})


def test_the_workflow_counters_decide_whether_to_check_again(app: ModuleType) -> None:
    import datetime as dt

    started = dt.datetime.now(dt.UTC).isoformat()
    counters = {"max_attempts": 3, "started_at": started, "deadline_seconds": 900, "backoff_seconds": 1}
    unchecked = {"reports": [{"Error": "States.Timeout", "Cause": "x"}]}
    first = invoke(app, {**unchecked, **counters, "attempt": 1})
    assert first["verified"] is False
    assert first["next"] == "check-again"
    assert invoke(app, {**unchecked, **counters, "attempt": 3})["next"] == "not-verified"


def test_a_down_cluster_is_checked_until_its_own_slurmctld_timeout_plus_the_margin(app: ModuleType) -> None:
    import datetime as dt

    now = dt.datetime.now(dt.UTC)
    dbd = "sacctmgr_cluster_ctl1.txt"
    down = [
        report("ctl1", "slurmctld_log_ctl1_primary.txt", "ping_both_down.txt", 0, dbd),
        report("ctl2", "slurmctld_log_ctl2_standby.txt", "ping_both_down.txt", 0, dbd),
    ]
    counters = {
        "max_attempts": 30,
        "started_at": now.isoformat(),
        "margin_seconds": 20,
        "deadline_seconds": 1800,
        "backoff_seconds": 5,
        "attempt": 1,
    }
    # The captures' SlurmctldTimeout is 10 s: a trigger 5 s ago converges 25 s from now.
    recent = {"time": (now - dt.timedelta(seconds=5)).isoformat()}
    first = invoke(app, {"reports": down, **counters, "trigger": recent})
    assert first["verified"] is False
    assert (first["next"], first["wait_seconds"], first["slurmctld_timeout"]) == ("check-again", 5, 10)
    # A trigger 40 s old: SlurmctldTimeout + margin has passed, this verdict is final.
    old = {"time": (now - dt.timedelta(seconds=40)).isoformat()}
    final = invoke(app, {"reports": down, **counters, "trigger": old})
    assert (final["next"], final["verdict"]) == ("not-verified", first["verdict"])
    # No trigger time (an operator's run): from the run's start.
    assert invoke(app, {"reports": down, **counters, "trigger": {}})["next"] == "check-again"


def test_no_report_says_slurmctld_timeout_so_slurms_default_applies(app: ModuleType) -> None:
    import datetime as dt

    now = dt.datetime.now(dt.UTC)
    out = invoke(
        app,
        {
            "reports": [unreachable("ctl1"), unreachable("ctl2")],
            "attempt": 1,
            "max_attempts": 30,
            "started_at": now.isoformat(),
            "trigger": {"time": (now - dt.timedelta(seconds=100)).isoformat()},
            "margin_seconds": 20,
            "backoff_seconds": 5,
        },
    )
    assert (out["verdict"], out["slurmctld_timeout"], out["next"]) == ("UNKNOWN", 120, "check-again")


def test_bad_counters_are_a_typed_error(app: ModuleType) -> None:
    with pytest.raises(ConvergenceInputError):
        invoke(app, {"reports": [], "attempt": 1, "max_attempts": "many"})
    with pytest.raises(ConvergenceInputError):
        invoke(app, {"reports": [], "attempt": 1, "max_attempts": 3, "trigger": {"time": 5}})


def _verdict_codes(text: str) -> list[tuple[int, dict[str, str]]]:
    """(VerdictCode, its dimensions) of every EMF line printed."""
    found = []
    for line in text.splitlines():
        if line.startswith('{"_aws"') and "VerdictCode" in line:
            blob = json.loads(line)
            [[names]] = [directive["Dimensions"] for directive in blob["_aws"]["CloudWatchMetrics"]]
            [value] = blob["VerdictCode"] if isinstance(blob["VerdictCode"], list) else [blob["VerdictCode"]]
            found.append((int(value), {name: blob[name] for name in names}))
    return found


def test_a_final_verdict_is_the_dashboard_s_current_one_with_the_cluster_dimension(
    app: ModuleType, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from hyperpod_ha.verdict import VERDICT_CODES, VerdictName

    monkeypatch.setenv("CLUSTER_NAME", "ml-cluster")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "hyperpod-ha")
    now = dt.datetime.now(dt.UTC).isoformat()
    last = {"reports": [], "max_attempts": 1, "attempt": 1, "started_at": now, "trigger": {"time": now}}
    capsys.readouterr()
    assert invoke(app, last)["verdict"] == "UNKNOWN"  # the run's last check: final
    assert _verdict_codes(capsys.readouterr().out) == [
        (VERDICT_CODES[VerdictName.UNKNOWN], {"service": "hyperpod-ha", "cluster": "ml-cluster"})
    ]


def test_a_drill_s_check_is_not_the_current_verdict(
    app: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert invoke(app, {"reports": []})["verdict"] == "UNKNOWN"  # the drill's call: no counters
    assert _verdict_codes(capsys.readouterr().out) == []


def test_a_verdict_the_run_checks_again_is_not_the_current_one(
    app: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    now = dt.datetime.now(dt.UTC).isoformat()
    loop = {"reports": [], "max_attempts": 3, "started_at": now, "trigger": {"time": now}}
    capsys.readouterr()
    assert invoke(app, {**loop, "attempt": 1})["next"] == "check-again"
    assert _verdict_codes(capsys.readouterr().out) == []
    assert invoke(app, {**loop, "attempt": 3})["next"] == "not-verified"
    assert [code for code, _ in _verdict_codes(capsys.readouterr().out)] == [3]


def test_every_verdict_has_its_own_code_higher_the_worse() -> None:
    from hyperpod_ha.verdict import VERDICT_CODES, VerdictName

    assert set(VERDICT_CODES) == set(VerdictName)
    assert sorted(VERDICT_CODES.values()) == list(range(len(VerdictName)))
    # 2 and up is not verified: an alarm or a glance at the widget needs nothing else.
    assert {name for name, code in VERDICT_CODES.items() if code < 2} == {"HEALTHY", "FAILED_OVER"}
