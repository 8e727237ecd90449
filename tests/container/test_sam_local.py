"""Every function in a Lambda container (SAM CLI, the local base image) against the local stand-in."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EVENTS
from tests.container.conftest import (
    BIN,
    IMAGE,
    TIMINGS,
    StandIn,
    StartLambda,
    lambda_architecture,
    sam_local_options,
    timed,
)

pytestmark = pytest.mark.container

CONTROLLERS = ["i-0a1b2c3d4e5f60001", "i-0a1b2c3d4e5f60002"]


def sam_invoke(function: str, sample: str, built: Path, stand_in: StandIn) -> tuple[Any, str]:
    """``sam local invoke FUNCTION -e events/SAMPLE``: the handler's result and the container's logs."""
    command = [str(BIN / "sam"), "local", "invoke", function, "--event", str(EVENTS / sample)]
    command += sam_local_options(built, stand_in, IMAGE)
    done = timed(f"sam local invoke {function} {sample}", command, 600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout), done.stderr


@pytest.fixture(scope="session")
def started_execution(built: Path, stand_in: StandIn, start_lambda: StartLambda) -> dict[str, Any]:
    """The SNS sample through ControllerStatusFunction, start-lambda ready for the run it starts."""
    result, _ = sam_invoke("ControllerStatusFunction", "sns_controller_on_primary.json", built, stand_in)
    (record,) = result["records"]
    return dict(record)


def test_the_local_image_has_the_runtimes_python_and_client(local_image: str) -> None:
    import subprocess

    probe = "import sys, awslambdaric, boto3; print(sys.version_info[:2], boto3.__version__)"
    done = subprocess.run(
        [
            *("docker", "run", "--rm", "--entrypoint", "/usr/bin/python3.13"),
            *("-e", "PYTHONPATH=/var/runtime", local_image, "-c", probe),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("(3, 13)")
    labels = json.loads(
        subprocess.run(
            ["docker", "image", "inspect", "--format", "{{json .Config.Labels}}", local_image],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert labels["hyperpod-ha.python"].startswith("3.13.")
    assert len(labels["hyperpod-ha.recipe"]) == 16


# ELF's e_machine (bytes 18-19, little-endian): what a shared object was compiled for. A stable-ABI
# extension (cryptography's ``_rust.abi3.so``) names no machine in its file name.
ELF_MACHINES = {"x86_64": 0x3E, "arm64": 0xB7}


def elf_machine(path: Path) -> int:
    with path.open("rb") as elf:
        return int.from_bytes(elf.read(20)[18:20], "little")


def test_the_layer_is_built_for_the_chosen_architecture(built: Path) -> None:
    extensions = list((built / "HyperpodHaLayer" / "python").rglob("*.so"))
    assert extensions, "the layer has compiled wheels (wrapt, websockets, cryptography)"
    wanted = ELF_MACHINES[lambda_architecture()]
    machines = {p.name: elf_machine(p) for p in extensions}
    assert {name: machine for name, machine in machines.items() if machine != wanted} == {}
    assert not (built / "HyperpodHaLayer" / "python" / "hyperpod_ha" / "embedded").exists()


def test_the_sns_sample_starts_an_execution_on_the_stand_in(
    started_execution: dict[str, Any], stand_in: StandIn
) -> None:
    assert started_execution["outcome"] == "started"
    sfn = stand_in.client("stepfunctions")
    described = sfn.describe_execution(executionArn=started_execution["execution_arn"])
    assert json.loads(described["input"])["cluster"] == stand_in.summary["cluster"]


def test_start_lambda_runs_the_state_machines_functions(
    started_execution: dict[str, Any], stand_in: StandIn, start_lambda: StartLambda
) -> None:
    """moto's interpreter runs the real definition; every Lambda task is a start-lambda container."""
    sfn = stand_in.client("stepfunctions")
    started = time.monotonic()
    while True:
        described = sfn.describe_execution(executionArn=started_execution["execution_arn"])
        if described["status"] != "RUNNING":
            break
        assert time.monotonic() - started < 900, "the execution did not end within 15 minutes"
        time.sleep(2)
    TIMINGS["execution through start-lambda"] = round(time.monotonic() - started, 1)
    history = sfn.get_execution_history(executionArn=started_execution["execution_arn"], maxResults=1000)
    verdicts = [
        json.loads(e["stateExitedEventDetails"]["output"])["verdict"]["value"]["verdict"]
        for e in history["events"]
        if e.get("stateExitedEventDetails", {}).get("name") == "Decide the verdict"
    ]
    assert described["status"] == "SUCCEEDED", described.get("error")
    assert verdicts == ["HEALTHY"]
    log = start_lambda.log.read_text()
    invoked = {
        function: log.count(f"POST /2015-03-31/functions/{function}/invocations")
        for function in ("DiscoverControllersFunction", "HealthCheckFunction", "EvaluateVerdictFunction")
    }
    # One discovery, the probe on each of the two controllers, one verdict.
    assert invoked == {
        "DiscoverControllersFunction": 1,
        "HealthCheckFunction": 2,
        "EvaluateVerdictFunction": 1,
    }


@pytest.mark.parametrize(
    ("function", "sample", "reason"),
    [
        ("ControllerStatusFunction", "sns_malformed.json", "ON|OFF"),
        ("HyperPodEventFunction", "eventbridge_malformed.json", "HealthSummary"),
    ],
)
def test_malformed_samples_are_rejected_with_their_reason(
    function: str, sample: str, reason: str, built: Path, stand_in: StandIn
) -> None:
    result, logs = sam_invoke(function, sample, built, stand_in)
    record = result["records"][0] if "records" in result else result
    assert record["outcome"] == "rejected"
    assert reason in record["reason"]
    assert reason in logs  # logged with its reason
    queue = (
        "ControllerStatusDeadLetterQueueUrl"
        if function == "ControllerStatusFunction"
        else "HyperPodEventDeadLetterQueueUrl"
    )
    sqs = stand_in.client("sqs")
    url = sqs.get_queue_url(QueueName=stand_in_queue_name(stand_in, queue))["QueueUrl"]
    kept = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert len(kept) == 1


def stand_in_queue_name(stand_in: StandIn, output: str) -> str:
    env = json.loads(stand_in.env_vars.read_text())
    controller = output.startswith("ControllerStatus")
    function = "ControllerStatusFunction" if controller else "HyperPodEventFunction"
    return str(env[function]["REJECTED_QUEUE_URL"].rsplit("/", 1)[-1])


def test_discovery_finds_the_simulated_controllers(built: Path, stand_in: StandIn) -> None:
    result, _ = sam_invoke("DiscoverControllersFunction", "discover_controllers.json", built, stand_in)
    assert [c["instance_id"] for c in result["controllers"]] == CONTROLLERS
    assert all(c["target"].startswith("sagemaker-cluster:") for c in result["controllers"])


def test_the_health_check_runs_the_probe_through_session_manager(built: Path, stand_in: StandIn) -> None:
    result, _ = sam_invoke("HealthCheckFunction", "health_check_controller.json", built, stand_in)
    assert (result["status"], result["transport"], result["exit_code"]) == ("CHECKED", "session-manager", 0)
    assert result["ping"]["lines"][0] == {"host": "ctl1", "label": "primary", "responding": True}
    assert result["role"]["logged"] == "primary"


def test_the_incident_sample_opens_an_ops_item_on_the_stand_in(built: Path, stand_in: StandIn) -> None:
    result, _ = sam_invoke("IncidentFunction", "incident_open.json", built, stand_in)
    assert (result["created"], result["notified"]) == (True, True)
    found = stand_in.client("ssm").describe_ops_items(
        OpsItemFilters=[{"Key": "OpsItemId", "Values": [result["ops_item_id"]], "Operator": "Equal"}]
    )["OpsItemSummaries"]
    assert [item["Status"] for item in found] == ["Open"]


def test_the_snapshot_sample_starts_a_backup_on_the_stand_in(built: Path, stand_in: StandIn) -> None:
    result, _ = sam_invoke("SnapshotStateFunction", "snapshot_state_start.json", built, stand_in)
    assert result["kind"] == "backup"
    (backup,) = stand_in.client("fsx").describe_backups(BackupIds=[result["id"]])["Backups"]
    assert {"Key": "created-by", "Value": "hyperpod-ha"} in backup["Tags"]


def test_the_abandoned_run_sample(built: Path, stand_in: StandIn) -> None:
    result, _ = sam_invoke("AbandonedRunFunction", "eventbridge_execution_aborted.json", built, stand_in)
    # The function asks Step Functions (the stand-in) about the execution the event names, not the
    # event: the sample's is unknown there, or one the stand-in's earlier tests ran to its end.
    # Either way nothing is released or opened (issue 35, finding 2).
    assert result["outcome"] == "ignored"
    assert result["reason"] in (
        "Step Functions knows no such execution",
        "status 'SUCCEEDED' is not ABORTED, TIMED_OUT or FAILED",
    )


@pytest.mark.parametrize(
    ("function", "sample", "outcomes"),
    [
        ("ControllerStatusFunction", "sns_controller_off_backup.json", {"started", "joined"}),
        ("HyperPodEventFunction", "eventbridge_node_health_controller.json", {"started", "joined"}),
        ("HyperPodEventFunction", "eventbridge_cluster_event_error.json", {"started", "joined"}),
        ("HyperPodEventFunction", "eventbridge_cluster_state_failed.json", {"notified"}),
        ("HyperPodEventFunction", "eventbridge_node_health_worker.json", {"counted"}),
    ],
)
def test_the_other_samples_through_start_lambda(
    function: str, sample: str, outcomes: set[str], start_lambda: StartLambda, stand_in: StandIn
) -> None:
    answer = start_lambda.client.invoke(FunctionName=function, Payload=(EVENTS / sample).read_bytes())
    result = json.loads(answer["Payload"].read())
    assert "FunctionError" not in answer, result
    record = result["records"][0] if "records" in result else result
    assert record["outcome"] in outcomes, record
