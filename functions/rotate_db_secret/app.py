"""RotateDbSecretFunction: rotate the Slurm accounting database's secret, then roll it out.

Two kinds of event:

- Secrets Manager's rotation contract ``{"Step", "SecretId", "ClientRequestToken"}``. After
  ``finishSecret`` the new credentials are rolled out to slurmdbd on every controller.
- ``{"action": "rollout", "controllers": [...]}`` (optional ``SecretId``): the roll-out
  alone, to re-run it after a failure. Without ``controllers`` the cluster's controllers are
  discovered.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

import boto3
from aws_lambda_powertools.utilities.typing import LambdaContext

from hyperpod_ha.cluster import RUNNING, discover_controllers
from hyperpod_ha.commands import CommandRunner, runner_for
from hyperpod_ha.observability import logger, metrics, tracer
from hyperpod_ha.rotation.database import TlsPolicy, pymysql_connector
from hyperpod_ha.rotation.rollout import DEFAULT_CONF_PATH, RolloutReport, RolloutSettings, roll_out
from hyperpod_ha.rotation.secret import AWSCURRENT, AWSPENDING
from hyperpod_ha.rotation.steps import (
    Rotation,
    RotationEvent,
    RotationRequestInvalid,
    RotationSettings,
    Step,
    Strategy,
)
from hyperpod_ha.settings import int_setting, setting
from hyperpod_ha.status_records import from_environment

if TYPE_CHECKING:
    from mypy_boto3_secretsmanager import SecretsManagerClient

# botocore logs request and response bodies at DEBUG, and those bodies hold the secret
# (GetSecretValue, PutSecretValue). Whatever LOG_LEVEL or a root logger says, this function
# never lets them out: the SDK's loggers get their own level, INFO at the lowest.
_WIRE_LOGGERS = ("botocore", "boto3", "urllib3")


def _silence_sdk_wire_logs() -> None:
    for name in _WIRE_LOGGERS:
        wire = logging.getLogger(name)
        if wire.level < logging.INFO:  # NOTSET (0) inherits, possibly DEBUG
            wire.setLevel(logging.INFO)


_silence_sdk_wire_logs()


@cache
def _secrets() -> SecretsManagerClient:
    return boto3.client("secretsmanager")


@cache
def _sagemaker() -> Any:
    return boto3.client("sagemaker")


@cache
def _runner() -> CommandRunner:
    return runner_for(setting("COMMAND_TRANSPORT", "session-manager"))


@cache
def _rotation() -> Rotation:
    settings = RotationSettings(
        strategy=Strategy.parse(setting("ROTATION_STRATEGY", Strategy.ALTERNATING.value)),
        default_host=os.environ.get("DB_HOST") or None,
        default_port=int_setting("DB_PORT", 3306),
        master_secret_arn=os.environ.get("MASTER_SECRET_ARN") or None,
    )
    tls = TlsPolicy.from_setting(os.environ.get("DB_CA_BUNDLE") or None)
    return Rotation(_secrets(), pymysql_connector(tls), settings)


def _failure_reporter(secret_arn: str) -> Callable[[dict[str, Any], str], None]:
    def report_rollout_failure(controller: dict[str, Any], reason: str) -> None:
        """``on_failure`` of the roll-out: the controller kept its old slurmdbd.conf; one incident."""
        # Imported here: only a failed roll-out needs it, not every rotation's cold start.
        from hyperpod_ha.incidents import Incidents, IncidentSettings, OpenRequest, redact, scrub_text

        instance = controller.get("instance_id") or controller.get("target") or "a controller"
        logger.error(
            "slurmdbd credentials roll-out failed: roll out again once the controller is fixed",
            extra={"instance_id": instance, "target": controller.get("target"), "reason": reason},
        )
        request = OpenRequest(
            cluster=setting("CLUSTER_NAME"),
            verdict="",
            kind="rollout-failed",
            execution_id=f"{secret_arn}:{controller.get('instance_id', '')}",
            reasons=(
                scrub_text(f"slurmdbd on {instance} did not take the rotated database credentials: {reason}"),
                "the controllers after it were left as they were; fix it, then run the roll-out again "
                '(invoke RotateDbSecretFunction with {"action": "rollout"})',
            ),
            evidence=redact({"controller": controller}),
        )
        Incidents(boto3.client("ssm"), boto3.client("sns"), IncidentSettings.from_environment()).open(request)

    return report_rollout_failure


def _controllers(event: dict[str, Any]) -> list[dict[str, Any]]:
    given = event.get("controllers")
    if given is not None:
        if not isinstance(given, list):
            raise RotationRequestInvalid("'controllers' must be a list of controller objects")
        return given
    found = discover_controllers(_sagemaker(), setting("CLUSTER_NAME"), setting("CONTROLLER_GROUP"))
    controllers = [c.to_json() for c in found.controllers]
    # Running controllers first: a controller being replaced fails its turn, and the roll-out
    # stops there, so it should not hold up the healthy ones.
    return sorted(controllers, key=lambda c: c["status"] != RUNNING)


def _rollout(secret_arn: str, controllers: list[dict[str, Any]]) -> RolloutReport:
    settings = RolloutSettings(
        secret_arn=secret_arn,
        document=setting("ROLLOUT_DOCUMENT"),
        deadline_seconds=float(int_setting("ROLLOUT_DEADLINE_SECONDS", 180)),
        conf_path=setting("SLURMDBD_CONF", DEFAULT_CONF_PATH),
        owner=setting("SLURMDBD_OWNER", "slurm"),
        verify_seconds=int_setting("SLURMDBD_VERIFY_SECONDS", 45),
    )
    report = roll_out(controllers, _runner(), settings, _failure_reporter(secret_arn))
    _record_rollout(secret_arn, report)
    return report


def _record_rollout(secret_arn: str, report: RolloutReport) -> None:
    """Per controller for the dashboard; the last roll-out for `hyperpod-ha status`."""
    for outcome in ("updated", "failed"):
        count = sum(1 for c in report.controllers if c.outcome == outcome)
        metrics.add_metric(name=f"RolloutControllers{outcome.capitalize()}", unit="Count", value=count)
    metrics.flush_metrics()  # the rotation's other steps emit nothing
    records = from_environment()
    if records is not None:
        records.put(setting("CLUSTER_NAME"), "rotation", {"secret_arn": secret_arn, **report.to_json()})


def _rollout_action(event: dict[str, Any]) -> dict[str, Any]:
    secret_id = event.get("SecretId") or setting("DB_SECRET_ARN")
    description = _secrets().describe_secret(SecretId=secret_id)
    stages = description.get("VersionIdsToStages", {})
    if any(AWSPENDING in labels and AWSCURRENT not in labels for labels in stages.values()):
        # Mid-rotation, AWSCURRENT may already be dead (single user): the nodes would fetch it.
        raise RotationRequestInvalid(f"a rotation of {description['ARN']} is in progress: roll out after it")
    report = _rollout(description["ARN"], _controllers(event))
    return {"action": "rollout", "secret_arn": description["ARN"], "rollout": report.to_json()}


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    _silence_sdk_wire_logs()
    if not isinstance(event, dict):
        raise RotationRequestInvalid("the event is not a JSON object")
    if event.get("action") == "rollout":
        return _rollout_action(event)
    rotation_event = RotationEvent.parse(event, os.environ.get("DB_SECRET_ARN") or None)
    result: dict[str, Any] = dict(_rotation().run(rotation_event).to_json())
    if rotation_event.step is Step.FINISH:
        # Also when the version was already AWSCURRENT: a retried finishSecret must not skip
        # the roll-out its first attempt may never have reached (the script is twice-safe).
        report = _rollout(result["secret_arn"], _controllers({}))
        result["rollout"] = report.to_json()
    return result
