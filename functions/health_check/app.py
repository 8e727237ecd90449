"""HealthCheckFunction: run the probe on one controller through SSM and return its report.

Input: one controller as discovery produces it (extra keys such as ``cluster`` are ignored).
Output: the controller's report (``hyperpod_ha.health.ControllerReport.to_json``), bounded in
size. An unreachable controller is a report, not an error; SSM throttling raises
``ControllerCheckThrottled`` for the state machine's Retry.

Environment: ``COMMAND_TRANSPORT`` (``session-manager`` or ``run-command``), ``PROBE_DOCUMENT``
(the stack's Session document, or ``AWS-StartNonInteractiveCommand``), ``PROBE_DEADLINE_SECONDS``
(default 60).
"""

from __future__ import annotations

from typing import Any, Final

from aws_lambda_powertools.utilities.typing import LambdaContext

from hyperpod_ha.commands import CommandRunner, runner_for
from hyperpod_ha.health import ControllerNode, check_controller
from hyperpod_ha.observability import logger, tracer
from hyperpod_ha.settings import positive_float_setting, setting

DEFAULT_DEADLINE_SECONDS: Final = 60.0

# One runner (and its SSM client) per transport and container, made on first use so that
# tests and the embedded stack configure the endpoint first.
_runners: dict[str, CommandRunner] = {}


def _runner(transport: str) -> CommandRunner:
    if transport not in _runners:
        _runners[transport] = runner_for(transport)
    return _runners[transport]


def _deadline() -> float:
    return positive_float_setting("PROBE_DEADLINE_SECONDS", DEFAULT_DEADLINE_SECONDS)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    node = ControllerNode.from_json(event)
    logger.append_keys(instance_id=node.instance_id)
    report = check_controller(
        node,
        _runner(setting("COMMAND_TRANSPORT", "session-manager")),
        document=setting("PROBE_DOCUMENT"),
        deadline_seconds=_deadline(),
    )
    logger.info("controller checked", extra={"status": report.status.value, "reason": report.reason})
    return report.to_json()
