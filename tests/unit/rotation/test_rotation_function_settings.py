"""RotateDbSecretFunction's settings: the template's environment, its defaults, and an error
naming the variable that is missing or malformed."""

from __future__ import annotations

import pytest

from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.rotation.contract import Strategy
from hyperpod_ha.rotation.errors import RotationRequestInvalid
from hyperpod_ha.rotation.function import RotateDbSecretFunctionSettings
from hyperpod_ha.rotation.rollout_document import DEFAULT_CONF_PATH

SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:ml-cluster-slurmdbd-HGZcWv"
TEMPLATE = {
    "CLUSTER_NAME": "ml-cluster",
    "CONTROLLER_GROUP": "controller-machine",
    "DB_SECRET_ARN": SECRET,
    "DB_HOST": "db.example.internal",
    "DB_PORT": "3307",
    "ROTATION_STRATEGY": "single",
    "MASTER_SECRET_ARN": "",
    "COMMAND_TRANSPORT": "run-command",
    "ROLLOUT_DOCUMENT": "hyperpod-ha-SlurmdbdRolloutDocument",
    "NOTIFICATION_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:hyperpod-ha-NotificationTopic",
    "INCIDENT_RESPONSE_PLAN_ARN": "",
    "STATE_TABLE": "hyperpod-ha-StateTable",
    "STATE_MACHINE_ARN": "arn:aws:states:eu-west-1:123456789012:stateMachine:verification",
    "SETTLE_SECONDS": "0",
    "MAX_ATTEMPTS": "30",
    "BACKOFF_SECONDS": "5",
    "AWS_REGION": "eu-west-1",
}


def test_the_templates_environment_is_read_with_the_code_defaults() -> None:
    settings = RotateDbSecretFunctionSettings.from_environment(TEMPLATE)
    assert settings.rotation.strategy is Strategy.SINGLE
    assert (settings.rotation.default_host, settings.rotation.default_port) == ("db.example.internal", 3307)
    assert settings.rotation.master_secret_arn is None
    assert settings.secret_arn == SECRET
    assert settings.command_transport == "run-command"
    # The state table holds the roll-out's lease and the status records; the run after it.
    assert settings.verification.state_table == "hyperpod-ha-StateTable"
    assert settings.verification.state_machine_arn.endswith(":stateMachine:verification")
    rollout = settings.rollout(SECRET)
    assert (rollout.document, rollout.conf_path, rollout.owner) == (
        "hyperpod-ha-SlurmdbdRolloutDocument",
        DEFAULT_CONF_PATH,
        "slurm",
    )
    assert (rollout.deadline_seconds, rollout.verify_seconds) == (180.0, 45)
    incidents = settings.incidents
    assert (incidents.region, incidents.response_plan_arn) == ("eu-west-1", None)


@pytest.mark.parametrize("missing", ["ROLLOUT_DOCUMENT", "STATE_TABLE", "STATE_MACHINE_ARN"])
def test_a_missing_variable_is_named(missing: str) -> None:
    environment = {k: v for k, v in TEMPLATE.items() if k != missing}
    with pytest.raises(ConfigurationError, match=f"{missing} is not set"):
        RotateDbSecretFunctionSettings.from_environment(environment)


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("DB_PORT", "3306a", ConfigurationError),
        ("SLURMDBD_VERIFY_SECONDS", "soon", ConfigurationError),
        ("ROTATION_STRATEGY", "triple", RotationRequestInvalid),
    ],
)
def test_a_malformed_variable_is_named(name: str, value: str, error: type[Exception]) -> None:
    with pytest.raises(error, match=name):
        RotateDbSecretFunctionSettings.from_environment({**TEMPLATE, name: value})
