"""HealthCheckFunction: run the probe on one controller through SSM and return its report.

Input: one controller as discovery produces it (extra keys are ignored); only this stack's
controllers are probed (``hyperpod_ha.controllers.targets``). Output: its report, bounded in
size; an unreachable controller is a report, SSM throttling raises ``ControllerCheckThrottled``
for the state machine's Retry. Environment: ``hyperpod_ha.controllers.settings.HealthCheckSettings``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.commands import CommandRunner, runner_for
from hyperpod_ha.controllers.check import check_controller
from hyperpod_ha.controllers.models import Controller
from hyperpod_ha.controllers.settings import HealthCheckSettings
from hyperpod_ha.controllers.targets import OwnControllers
from hyperpod_ha.observability import logger, observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext


@cache
def _wiring() -> tuple[HealthCheckSettings, CommandRunner, OwnControllers]:
    """Once per container, on the first invocation: the settings, the runner, the own controllers."""
    import boto3

    s = HealthCheckSettings.from_environment()
    own = OwnControllers(s.cluster, s.controller_group, s.probe.transport, boto3.client("sagemaker"))
    return s, runner_for(s.probe.transport), own


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    settings, runner, own = _wiring()
    node = own.check(Controller.from_json(event))
    logger.append_keys(instance_id=node.instance_id)
    report = check_controller(
        node, runner, document=settings.probe.document, deadline_seconds=settings.probe.deadline_seconds
    )
    logger.info("controller checked", extra={"status": report.status.value, "reason": report.reason})
    return report.to_json()
