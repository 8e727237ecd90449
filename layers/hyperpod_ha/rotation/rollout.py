"""Rolling the rotated credentials out to slurmdbd, one controller at a time.

Every controller keeps its own slurmdbd.conf (it is deliberately not on FSx), and slurmdbd
only reads StoragePass when it starts. So, controller after controller: run the node script
(:mod:`hyperpod_ha.rotation.slurmdbd_credentials`) through the command runner with this
function's own SSM document, and go on only once that controller's slurmdbd answers. The
first controller that fails stops the roll-out: the others keep what they have (with
alternating users that still works) and ``on_failure`` is called (the incident).

The password never passes through here: the node script fetches AWSCURRENT itself with the
node's instance role (the documents: :mod:`.rollout_document`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final

from hyperpod_ha.commands import CommandError, CommandRequest, CommandResult, CommandRunner
from hyperpod_ha.errors import InputRejected
from hyperpod_ha.json_input import load_json
from hyperpod_ha.observability import logger
from hyperpod_ha.redaction import scrub_text
from hyperpod_ha.rotation.rollout_document import (
    DEFAULT_CONF_PATH,
    GENERIC_DOCUMENT,
    render_node_command,
)


class InvalidControllers(InputRejected):
    """The controllers list is empty or a controller lacks ``instance_id``/``target``."""


class NodeReportInvalid(InputRejected):
    """The node script's output has no report line we can read."""


@dataclass(frozen=True)
class RolloutSettings:
    secret_arn: str
    document: str
    deadline_seconds: float = 180.0
    conf_path: str = DEFAULT_CONF_PATH
    owner: str = "slurm"
    verify_seconds: int = 45

    def document_parameters(self) -> dict[str, list[str]]:
        return {
            "secretId": [self.secret_arn],
            "confPath": [self.conf_path],
            "owner": [self.owner],
            "verifySeconds": [str(self.verify_seconds)],
        }

    def parameters(self) -> dict[str, list[str]]:
        """What the request carries: the document's parameters, or with the generic document
        the rendered command line (the script and these values; never a password)."""
        if self.document == GENERIC_DOCUMENT:
            return {"command": [render_node_command(self.document_parameters())]}
        return self.document_parameters()


@dataclass(frozen=True)
class ControllerRollout:
    instance_id: str
    target: str
    outcome: str  # updated | failed | not_attempted
    reason: str | None = None
    storage_user: str | None = None
    restored_previous: bool | None = None
    seconds_to_answer: float | None = None

    def to_json(self) -> dict[str, Any]:
        # What is not known (None) is left out.
        return {key: value for key, value in asdict(self).items() if value is not None}


@dataclass(frozen=True)
class RolloutReport:
    controllers: tuple[ControllerRollout, ...]

    @property
    def complete(self) -> bool:
        return all(c.outcome == "updated" for c in self.controllers)

    def to_json(self) -> dict[str, Any]:
        return {"complete": self.complete, "controllers": [c.to_json() for c in self.controllers]}


FailureHandler = Callable[[dict[str, Any], str], None]


def _checked(controllers: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    if not controllers:
        raise InvalidControllers("no controllers to roll the credentials out to")
    checked: list[dict[str, Any]] = []
    for position, controller in enumerate(controllers):
        if not isinstance(controller, Mapping):
            raise InvalidControllers(f"controller #{position} is not an object")
        for key in ("instance_id", "target"):
            if not isinstance(controller.get(key), str) or not controller.get(key):
                raise InvalidControllers(f"controller #{position} has no {key!r}")
        checked.append(dict(controller))
    return checked


# How many of the output's last lines may hold the report.
REPORT_TAIL_LINES: Final = 64
# The report's fields and the JSON types they must have (absent is fine; outcome is required).
_REPORT_FIELDS: Final[dict[str, tuple[type, ...]]] = {
    "stage": (str,),
    "reason": (str,),
    "storage_user": (str,),
    "restored_previous": (bool,),
    "seconds_to_answer": (int, float),
}


def parse_node_report(result: CommandResult) -> dict[str, Any]:
    """The node script's last JSON line, cross-checked with the exit code when there is one.

    Only the output's last :data:`REPORT_TAIL_LINES` lines are looked at (the script prints its
    report last; stderr may follow it when the streams are merged), each decoded once to a
    bounded depth: bounded work on a 4 MiB output, whatever it holds. Lines that are not JSON
    are the script's other output.
    """
    tail = result.stdout.rsplit("\n", REPORT_TAIL_LINES)[-REPORT_TAIL_LINES:]
    for raw in reversed(tail):
        line = raw.strip()
        if not line.startswith("{"):
            continue
        try:
            report = load_json(line, NodeReportInvalid, what="the node's report line")
        except NodeReportInvalid:
            continue
        if isinstance(report, dict) and report.get("outcome") in ("updated", "failed"):
            _check_fields(report)
            if report["outcome"] == "updated" and result.exit_code not in (0, None):
                raise NodeReportInvalid(f"the node reported success but exited {result.exit_code}")
            return report
    tail = (result.stderr or "").strip().splitlines()[-1:] or ["no stderr"]
    raise NodeReportInvalid(
        f"the node script printed no report (exit code {result.exit_code}; {tail[0][:200]})"
    )


def _check_fields(report: Mapping[str, Any]) -> None:
    for name, types in _REPORT_FIELDS.items():
        value = report.get(name)
        if value is not None and (
            not isinstance(value, types) or (bool not in types and isinstance(value, bool))
        ):
            raise NodeReportInvalid(f"the node's report has a {name!r} of the wrong type")


def _attempt(
    controller: dict[str, Any], runner: CommandRunner, settings: RolloutSettings
) -> ControllerRollout:
    instance_id, target = controller["instance_id"], controller["target"]
    request = CommandRequest(
        target=target,
        document=settings.document,
        deadline_seconds=settings.deadline_seconds,
        parameters=settings.parameters(),
    )
    try:
        report = parse_node_report(runner.run(request))
    except CommandError as error:
        return ControllerRollout(instance_id, target, "failed", f"{type(error).__name__}: {error.reason}")
    except NodeReportInvalid as error:
        return ControllerRollout(instance_id, target, "failed", str(error))
    if report["outcome"] == "updated":
        return ControllerRollout(
            instance_id,
            target,
            "updated",
            storage_user=report.get("storage_user"),
            seconds_to_answer=report.get("seconds_to_answer"),
        )
    return ControllerRollout(
        instance_id,
        target,
        "failed",
        # The node's own words: through the one redaction path before they go anywhere.
        scrub_text(f"{report.get('stage', 'unknown')}: {report.get('reason', 'no reason given')}"),
        restored_previous=bool(report.get("restored_previous")),
    )


def roll_out(
    controllers: Sequence[Mapping[str, Any]],
    runner: CommandRunner,
    settings: RolloutSettings,
    on_failure: FailureHandler,
) -> RolloutReport:
    """Update the controllers in the given order (put the active controller last); stop at the
    first failure, leave the rest untouched and call ``on_failure(controller, reason)``."""
    checked = _checked(controllers)
    outcomes: list[ControllerRollout] = []
    for position, controller in enumerate(checked):
        outcome = _attempt(controller, runner, settings)
        outcomes.append(outcome)
        if outcome.outcome == "updated":
            logger.info("slurmdbd answers with the rotated credentials", extra=outcome.to_json())
            continue
        rest = checked[position + 1 :]
        outcomes.extend(ControllerRollout(c["instance_id"], c["target"], "not_attempted") for c in rest)
        logger.error(
            "credentials roll-out stopped at a controller",
            extra={**outcome.to_json(), "not_attempted": [c["instance_id"] for c in rest]},
        )
        on_failure(controller, outcome.reason or "failed")
        break
    return RolloutReport(tuple(outcomes))
