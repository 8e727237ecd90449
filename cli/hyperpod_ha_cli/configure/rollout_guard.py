"""The ``UpdateClusterSoftware`` deployment configuration that lets this stack's alarms guard a
controller AMI roll-out: HyperPod replaces one controller at a time, waits, and rolls back when
a named alarm goes off (``DeploymentConfig.AutoRollbackConfiguration``).

The guards are the verification's own alarms: a verification that ends not verified (DOWN,
DEGRADED, SPLIT_BRAIN, UNKNOWN) or times out. A verification waits out HyperPod's maintenance
before it judges, so the batch being replaced is not itself the failure. ``NoStandbyReadyAlarm``
is left out on purpose: with two controllers, the one being replaced leaves no standby for
minutes, and every roll-out would roll back."""

from __future__ import annotations

import json
import shlex
from typing import Any

GUARDS = ("VerificationExecutionsFailedAlarm", "VerificationExecutionsTimedOutAlarm")
# Between batches: long enough for the verification that follows a replaced controller
# (HyperPod's event, the maintenance wait, the checks), within the API's 3600 s.
WAIT_SECONDS = 900


def deployment_config(stack_name: str) -> dict[str, Any]:
    """``DeploymentConfig``: one controller at a time, rolled back on the stack's guards."""
    return {
        "RollingUpdatePolicy": {
            "MaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 1},
            "RollbackMaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 1},
        },
        "WaitIntervalInSeconds": WAIT_SECONDS,
        "AutoRollbackConfiguration": [{"AlarmName": f"{stack_name}.{alarm}"} for alarm in GUARDS],
    }


def update_command(cluster: str, region: str, controller_group: str, stack_name: str) -> str:
    """The AWS CLI command that rolls the controller group's AMI out under the guards."""
    config = json.dumps(deployment_config(stack_name), separators=(",", ":"))
    return " ".join(
        [
            "aws sagemaker update-cluster-software",
            f"--cluster-name {shlex.quote(cluster)}",
            f"--region {shlex.quote(region)}",
            f"--instance-groups InstanceGroupName={shlex.quote(controller_group)}",
            f"--deployment-config {shlex.quote(config)}",
        ]
    )
