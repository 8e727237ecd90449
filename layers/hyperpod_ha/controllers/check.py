"""Checking one controller: run the probe through a command transport and report what it found.

An unreachable controller is a report, not an error; only SSM throttling raises
(:class:`ControllerCheckThrottled`), for the state machine's Retry.
"""

from __future__ import annotations

from typing import Any, Final

from hyperpod_ha.commands import (
    CommandError,
    CommandRequest,
    CommandResult,
    CommandRunner,
    CommandTimedOut,
    TargetUnreachable,
    Throttled,
)
from hyperpod_ha.controllers.decoding import LIST_LIMIT
from hyperpod_ha.controllers.errors import ControllerCheckThrottled
from hyperpod_ha.controllers.evidence import evidence
from hyperpod_ha.controllers.models import RUNNING, Controller, ControllerReport, ReportStatus
from hyperpod_ha.errors import InputRejected
from hyperpod_ha.observability import logger
from hyperpod_ha.probe import probe_command
from hyperpod_ha.slurm import ProbeOutputError, excerpt, parse_probe_output

NON_INTERACTIVE_DOCUMENT: Final = "AWS-StartNonInteractiveCommand"
SHELL_SCRIPT_DOCUMENT: Final = "AWS-RunShellScript"


# The failures that say the node itself is gone (not connected, or silent past our deadline),
# as an UNREACHABLE report's reason starts (check_controller); the others (denied, a broken
# session, encryption asked) are this side's, and a reboot would not mend them.
_NODE_SIDE: Final = (TargetUnreachable.__name__, CommandTimedOut.__name__)


def node_side_failure(reason: str | None) -> bool:
    """Whether an UNREACHABLE report's reason is a failure of the node, not of this side."""
    return reason is not None and reason.split(":", 1)[0] in _NODE_SIDE


def probe_parameters(document: str) -> dict[str, list[str]]:
    """Parameters for the document that runs the probe.

    Our own Session document fixes the command (no parameters); the AWS documents take it as a
    parameter. With ``AWS-StartNonInteractiveCommand`` there is no exit code and stdout and
    stderr are merged: the probe's own final result line says it finished.
    """
    if document == NON_INTERACTIVE_DOCUMENT:
        return {"command": [probe_command()]}
    if document == SHELL_SCRIPT_DOCUMENT:
        return {"commands": [probe_command()]}
    return {}


def probe_request(node: Controller, document: str, deadline_seconds: float) -> CommandRequest:
    return CommandRequest(
        target=node.target,
        document=document,
        deadline_seconds=deadline_seconds,
        parameters=probe_parameters(document),
    )


def check_controller(
    node: Controller, runner: CommandRunner, *, document: str, deadline_seconds: float
) -> ControllerReport:
    """Probe one controller. Never raises for an unreachable node; raises
    :class:`ControllerCheckThrottled` when SSM throttles (the workflow retries)."""
    if node.status != RUNNING:
        return controller_report(
            node, ReportStatus.NOT_RUNNING, reason=f"node status is {node.status}: not probed"
        )
    try:
        result = runner.run(probe_request(node, document, deadline_seconds))
    except Throttled as error:
        raise ControllerCheckThrottled(
            f"SSM throttled the probe of {node.instance_id}: {error.reason}"
        ) from error
    except CommandError as error:
        logger.warning(
            "controller unreachable",
            extra={
                "instance_id": node.instance_id,
                "error_type": type(error).__name__,
                "reason": error.reason,
            },
        )
        return controller_report(
            node,
            ReportStatus.UNREACHABLE,
            reason=excerpt(f"{type(error).__name__}: {error.reason}"),
            transport=runner.transport,
        )
    return report_from_result(node, result)


def controller_report(controller: Controller, status: ReportStatus, **values: Any) -> ControllerReport:
    """A report on ``controller``: who it is (instance, group, host, address, target) and ``values``."""
    return ControllerReport(
        instance_id=controller.instance_id,
        status=status,
        group=controller.group,
        node_status=controller.status,
        hostname=controller.hostname,
        private_ip=controller.private_ip,
        target=controller.target,
        **values,
    )


def report_from_result(node: Controller, result: CommandResult) -> ControllerReport:
    """The report for one probe run's output (pure: no I/O)."""
    run = {
        "transport": result.transport,
        "duration_seconds": round(result.duration_seconds, 3),
        "exit_code": result.exit_code,
    }
    try:
        output = parse_probe_output(result.stdout)
    except ProbeOutputError as problem:
        # The first line that holds something, found without splitting a 4 MiB output into lines.
        first = result.stdout.lstrip()[:512].splitlines()[0] if result.stdout.strip() else ""
        why = f"{problem}; output begins {excerpt(first, 120)!r}" if first else f"{problem}; no output"
        return controller_report(node, ReportStatus.PROBE_FAILED, reason=excerpt(why), **run)
    try:
        found = evidence(node, output)
    except InputRejected as problem:
        # A section no parser can read: this controller's probe failed, not the whole run.
        reason = excerpt(f"probe output not understood: {problem}")
        return controller_report(node, ReportStatus.PROBE_FAILED, reason=reason, **run)
    notes = list(found.pop("notes"))
    if result.exit_code not in (None, 0):
        notes.append(f"probe exited {result.exit_code}")
    if result.stderr and result.stderr.strip():
        notes.append(f"probe stderr: {excerpt(result.stderr, 160)}")
    if not output.complete:
        return controller_report(
            node,
            ReportStatus.PROBE_FAILED,
            reason=(
                f"probe failed on the node: {output.error}"
                if output.error
                else "probe output ends before its result line: cut off or killed"
            ),
            notes=tuple(notes[:LIST_LIMIT]),
            **run,
            **found,
        )
    return controller_report(node, ReportStatus.CHECKED, notes=tuple(notes[:LIST_LIMIT]), **run, **found)
