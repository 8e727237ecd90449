"""HealthCheckFunction: run the probe on one controller through SSM and return its report.

Input: one controller as discovery produces it (extra keys such as ``cluster`` are ignored).
Output: the controller's report (``ControllerReport.to_json``), bounded in size. An unreachable
controller is a report, not an error; SSM throttling raises ``ControllerCheckThrottled`` for
the state machine's Retry. Environment: ``hyperpod_ha.controllers.settings.ProbeSettings``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.commands import CommandRunner, runner_for
from hyperpod_ha.controllers.check import check_controller
from hyperpod_ha.controllers.models import Controller
from hyperpod_ha.controllers.settings import ProbeSettings
from hyperpod_ha.observability import logger, observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext


@cache
def _wiring() -> tuple[ProbeSettings, CommandRunner]:
    """Once per container, on the first invocation: the settings, then the runner (its client)."""
    settings = ProbeSettings.from_environment()
    return settings, runner_for(settings.transport)


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    settings, runner = _wiring()
    node = Controller.from_json(event)
    logger.append_keys(instance_id=node.instance_id)
    report = check_controller(
        node, runner, document=settings.document, deadline_seconds=settings.deadline_seconds
    )
    logger.info("controller checked", extra={"status": report.status.value, "reason": report.reason})
    return report.to_json()
