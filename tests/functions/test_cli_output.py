"""The ``hyperpod-ha`` command as an operator meets it: the result alone on stdout (with
``--json`` exactly one JSON document), no log line without ``--verbose``, every error one line
with its exit code (usage 2, runtime 3), ``--version``, and the stack and account found by the
one rule (flags, environment, the user's file, the checkout's samconfig.toml)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

# Each test starts the hyperpod-ha command as a new Python: in `make test`, not in `make check`.
pytestmark = pytest.mark.cli_process

CLI = [sys.executable, "-m", "hyperpod_ha_cli"]
NO_ACCOUNT = (
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)


def run_cli(
    *args: str, env: dict[str, str] | None = None, drop: tuple[str, ...] = (), cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if key not in drop}
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**environment, **(env or {})},
        check=False,
    )


def one_json_document(text: str) -> Any:
    """json.loads refuses anything before or after the one document (a log line, a second object)."""
    return json.loads(text)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


@pytest.mark.slow
def test_simulate_json_is_one_document_and_nothing_else() -> None:
    done = run_cli("simulate", "failover", "--json")
    assert done.returncode == 0, done.stderr
    data = one_json_document(done.stdout)
    assert (data["scenario"], data["verdict"]) == ("failover", "FAILED_OVER")
    assert data["reason_codes"][0] == "backup-took-over"
    assert data["reasons"][0].startswith("ctl2 (SlurmctldHost[1]) took over from ctl1")
    assert done.stderr == ""


@pytest.mark.slow
def test_simulate_status_shows_the_stack_the_scenario_ran_on() -> None:
    done = run_cli("simulate", "both-down", "--status", "--json")
    assert done.returncode == 0, done.stderr
    status = one_json_document(done.stdout)["status"]
    assert status["cluster"] == "ml-cluster"
    assert status["last_verdict"]["verdict"] == "DOWN"
    assert len(status["last_verdict"]["reasons"]) >= 4
    (incident,) = status["open_incidents"]
    assert incident["kind"]
    assert status["last_snapshot"]["status"] == "AVAILABLE"
    # The controller table's rows keep machine values: seconds, booleans.
    rows = {row["name"]: row for row in status["controllers"]}
    assert sorted(rows) == ["ctl1", "ctl2"]
    assert {(row["position"], row["active"], row["answers_ping"]) for row in rows.values()} == {
        (0, False, False),
        (1, False, False),
    }
    assert all(isinstance(row["heartbeat_age_seconds"], int) for row in rows.values())
    assert isinstance(status["controllers_seen_at"], int)
    assert done.stderr == ""


@pytest.mark.slow
def test_after_a_drill_the_status_table_is_the_drill_s_last_check() -> None:
    done = run_cli("simulate", "drill", "--status", "--json")
    assert done.returncode == 0, done.stderr
    status = one_json_document(done.stdout)["status"]
    assert status["last_verdict"]["source"] == "drill"
    # Handed back: ctl1 active again, ctl2 a standby.
    assert [(c["name"], c["active"]) for c in status["controllers"]] == [("ctl1", True), ("ctl2", False)]
    assert status["last_verdict"]["active_controller"] == "ctl1"


@pytest.mark.slow
def test_simulate_status_prints_the_controller_table_above_the_last_verdict() -> None:
    done = run_cli("simulate", "failover", "--status")
    assert done.returncode == 0, done.stderr
    # The first line says whether the cluster is verified and why (the exit code of `status`).
    first, *view = done.stdout.split("\ncluster ml-cluster: ", 1)[1].splitlines()
    assert first.startswith(("verified (the last verdict is FAILED_OVER)", "NOT verified ("))
    assert view[0].startswith("controllers, as the last verdict saw them ")
    assert view[1].split() == [
        "CONTROLLER",
        "INSTANCE",
        "ADDRESS",
        "ROLE",
        "SLURMCTLD",
        "PING",
        "HEARTBEAT",
        "SLURMDBD",
    ]
    ctl1, ctl2 = (line.split("  ") for line in view[2:4])
    cells = [[cell.strip() for cell in row if cell.strip()] for row in (ctl1, ctl2)]
    assert cells[0][:6] == [
        "ctl1",
        "i-0a1b2c3d4e5f60001",
        "10.214.0.11",
        "primary, down",
        "not running",
        "DOWN",
    ]
    assert cells[1][:6] == ["ctl2", "i-0a1b2c3d4e5f60002", "10.214.0.12", "backup, active", "running", "UP"]
    assert cells[1][6].endswith("ago (writer)")
    assert view[4].startswith("last verdict: FAILED_OVER, active controller ctl2, ")
    assert done.stderr == ""


def test_simulate_status_goes_with_the_embedded_scenarios() -> None:
    done = run_cli("simulate", "back", "--lab", "--status")
    assert done.returncode == 2
    assert "--status and --messages go with the embedded scenarios" in one_line(done)


def test_invoke_with_verbose_logs_on_stderr_and_keeps_stdout_one_document() -> None:
    done = run_cli(
        "--verbose",
        "invoke",
        "ControllerStatusFunction",
        "--event",
        "events/sns_controller_on_primary.json",
        "--embedded",
    )
    assert done.returncode == 0, done.stderr
    assert one_json_document(done.stdout)["records"][0]["outcome"] == "started"
    logged = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert any(entry.get("message") == "controller notification handled" for entry in logged)


def test_an_unknown_scenario_is_a_usage_error_on_stderr() -> None:
    done = run_cli("simulate", "nosuch")
    assert done.returncode == 2
    assert done.stdout == ""
    line = one_line(done)
    assert line.startswith("hyperpod-ha: simulate: unknown scenario 'nosuch'; known: healthy, failover")


def test_simulate_list_lists_on_stdout() -> None:
    done = run_cli("simulate", "list")
    assert done.returncode == 0
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert {"healthy", "failover", "both-down", "drill"} <= set(names)


def test_a_missing_event_file_is_a_usage_error() -> None:
    done = run_cli("invoke", "ControllerStatusFunction", "--event", "/missing.json", "--embedded")
    assert done.returncode == 2
    assert (
        one_line(done)
        == "hyperpod-ha: invoke: cannot read the event /missing.json: No such file or directory"
    )


def test_an_event_that_is_not_json_is_a_usage_error(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text("{not json")
    done = run_cli("invoke", "ControllerStatusFunction", "--event", str(event), "--embedded")
    assert done.returncode == 2
    assert one_line(done).startswith(f"hyperpod-ha: invoke: {event} is not JSON: ")


def test_a_function_moto_cannot_run_says_what_to_use_instead() -> None:
    done = run_cli(
        "invoke", "HealthCheckFunction", "--event", "events/health_check_controller.json", "--embedded"
    )
    assert done.returncode == 1
    assert one_json_document(done.stdout)["errorType"] == "NotImplementedError"
    line = one_line(done)
    assert "HealthCheckFunction calls start_session" in line
    assert "hyperpod-ha local up" in line
    assert "sam local invoke HealthCheckFunction" in line
    assert "hyperpod-ha simulate" in line


def test_a_missing_argument_is_one_usage_line() -> None:
    done = run_cli("runbook", "start")
    assert done.returncode == 2
    assert one_line(done) == (
        "hyperpod-ha runbook start: the following arguments are required: --cluster "
        "(see hyperpod-ha runbook start --help)"
    )


@pytest.mark.parametrize(
    "command",
    [
        ("status", "--cluster"),
        ("runbook", "start", "--cluster"),
        ("drill", "start", "--cluster"),
    ],
)
def test_a_bad_cluster_name_is_one_usage_line_before_any_aws_call(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    done = run_cli(*command, "ml_cluster;rm", env=_no_aws_files(tmp_path), drop=NO_ACCOUNT)
    assert done.returncode == 2
    assert done.stdout == ""
    line = one_line(done)
    assert line.startswith(
        f"hyperpod-ha {' '.join(command[:-1])}: argument --cluster: 'ml_cluster;rm' is not"
    )
    assert "HyperPod cluster name" in line


def test_version_is_the_package_version() -> None:
    done = run_cli("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"hyperpod-ha {metadata.version('hyperpod-ha')}"


def _no_aws_files(tmp_path: Path) -> dict[str, str]:
    return {
        "AWS_CONFIG_FILE": str(tmp_path / "no-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
    }


def test_status_without_a_region_is_one_line(tmp_path: Path) -> None:
    done = run_cli("status", "--cluster", "ml-cluster", env=_no_aws_files(tmp_path), drop=NO_ACCOUNT)
    assert done.returncode == 2
    assert one_line(done) == (
        "hyperpod-ha: status: no AWS region: give --region, set HYPERPOD_HA_REGION or AWS_REGION, "
        "or run `hyperpod-ha configure --cluster ml-cluster`"
    )


def test_a_json_command_that_fails_prints_one_json_object_too(tmp_path: Path) -> None:
    done = run_cli(
        "status", "--cluster", "ml-cluster", "--json", env=_no_aws_files(tmp_path), drop=NO_ACCOUNT
    )
    assert done.returncode == 2
    assert one_json_document(done.stdout) == {
        "error": "no AWS region: give --region, set HYPERPOD_HA_REGION or AWS_REGION, "
        "or run `hyperpod-ha configure --cluster ml-cluster`",
        "exit_code": 2,
    }
    assert one_line(done).startswith("hyperpod-ha: status: no AWS region")
    # Not the cluster the embedded stack watches: the command's own exit 2, still one object.
    other = run_cli("status", "--cluster", "other-cluster", "--embedded", "--json")
    assert other.returncode == 2
    error = one_json_document(other.stdout)
    assert error["exit_code"] == 2
    assert "not 'other-cluster'" in error["error"]


def test_status_embedded_json_is_one_document() -> None:
    done = run_cli("status", "--cluster", "ml-cluster", "--embedded", "--json")
    # A stack that has recorded no verdict yet is not a verified cluster: exit 1, and why.
    assert done.returncode == 1, done.stderr
    status = one_json_document(done.stdout)
    assert (status["cluster"], status["controllers"], status["last_verdict"]) == ("ml-cluster", [], None)
    assert status["check"] == {"verified": False, "exit_code": 1, "why": "no verdict recorded yet"}
    assert done.stderr == ""


def test_status_without_credentials_is_one_line_and_the_traceback_only_with_verbose(tmp_path: Path) -> None:
    args = ("status", "--cluster", "ml-cluster", "--region", "eu-west-2")
    done = run_cli(*args, env=_no_aws_files(tmp_path), drop=NO_ACCOUNT)
    assert done.returncode == 3
    assert one_line(done) == (
        "hyperpod-ha: status: no AWS credentials: `aws sso login`, a --profile, or the environment's"
    )
    verbose = run_cli(*args, "--verbose", env=_no_aws_files(tmp_path), drop=NO_ACCOUNT)
    assert verbose.returncode == 3
    assert "Traceback" in verbose.stderr
    assert verbose.stderr.splitlines()[-1] == one_line(done)


def test_runbook_without_a_region_is_a_usage_error_before_anything_starts(tmp_path: Path) -> None:
    done = run_cli(
        "runbook", "start", "--cluster", "ml-cluster", env=_no_aws_files(tmp_path), drop=NO_ACCOUNT
    )
    assert done.returncode == 2
    assert one_line(done).startswith("hyperpod-ha: runbook start: no AWS region")


@pytest.fixture
def deployed_in_us_east_1(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The embedded stack created on a moto server in us-east-1; the CLI's default will be another."""
    from moto.server import ThreadedMotoServer

    from hyperpod_ha_dev.embedded.site import create_site
    from hyperpod_ha_dev.embedded.stack import create_stack

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    # The server shares this process's moto backends: what an earlier test left there goes first.
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"), timeout=30)  # noqa: S310
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    site = create_site()
    create_stack(ROOT, site.stack_parameters())
    yield endpoint
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"), timeout=30)  # noqa: S310
    server.stop()


def _checkout_with_samconfig(tmp_path: Path, region: str) -> Path:
    """A checkout whose samconfig.toml says where the stack was deployed (``sam deploy --guided``)."""
    tmp_path.mkdir(parents=True)
    for name in ("template.yaml", "functions", "statemachine", "layers"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "samconfig.toml").write_text(
        f'version = 0.1\n[ml-cluster.deploy.parameters]\nstack_name = "hyperpod-ha"\nregion = "{region}"\n'
    )
    return tmp_path


@pytest.mark.slow
def test_the_stack_is_found_in_the_region_of_region_or_samconfig(
    deployed_in_us_east_1: str, tmp_path: Path
) -> None:
    # The SDK's default region is another one: only --region or samconfig.toml's finds the stack.
    eu_west_2 = {
        "AWS_ENDPOINT_URL": deployed_in_us_east_1,
        "AWS_DEFAULT_REGION": "eu-west-2",
        "AWS_REGION": "eu-west-2",
    }
    elsewhere = run_cli("status", "--cluster", "ml-cluster", "--json", env=eu_west_2)
    assert elsewhere.returncode == 2
    assert one_line(elsewhere).endswith(
        "no stack hyperpod-ha-ml-cluster (the default name) in eu-west-2 (the SDK default): "
        "give --stack-name or --region, or run `hyperpod-ha configure --cluster ml-cluster`"
    )

    # The runbook finds the stack's state machine and lease table there and starts the run.
    runbook = ("runbook", "start", "--cluster", "ml-cluster")
    given = run_cli(*runbook, "--region", "us-east-1", "--stack-name", "hyperpod-ha", env=eu_west_2)
    assert given.returncode == 0, given.stderr
    assert given.stdout.startswith("started verification arn:aws:states:us-east-1:")

    checkout = _checkout_with_samconfig(tmp_path / "checkout", "us-east-1")
    configured = run_cli(*runbook, env=eu_west_2, cwd=checkout)
    assert configured.returncode == 0, configured.stderr
    # The first run holds the cluster's lease: the second joins it, in the same account.
    assert configured.stdout.startswith("joined the running verification arn:aws:states:us-east-1:")
