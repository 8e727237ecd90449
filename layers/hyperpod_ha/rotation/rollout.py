"""Rolling the rotated credentials out to slurmdbd, one controller at a time.

Every controller keeps its own slurmdbd.conf (it is deliberately not on FSx), and slurmdbd
only reads StoragePass when it starts. So, controller after controller: run the node script
(:mod:`hyperpod_ha.rotation.slurmdbd_credentials`) through the command runner with this
function's own SSM document, and go on only once that controller's slurmdbd answers. The
first controller that fails stops the roll-out: the others keep what they have (with
alternating users that still works) and ``on_failure`` is called (the incident).

The password never passes through here: the node script fetches AWSCURRENT itself with the
node's instance role. The document carries the script (gzip + base64, so the SSM agent's
shell-like splitting has nothing to misread) and takes only non-secret parameters.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hyperpod_ha.commands import CommandError, CommandRequest, CommandResult, CommandRunner
from hyperpod_ha.errors import InputRejected
from hyperpod_ha.observability import logger

NODE_SCRIPT = Path(__file__).with_name("slurmdbd_credentials.py")
DEFAULT_CONF_PATH = "/opt/slurm/etc/slurmdbd.conf"  # where the HyperPod lifecycle scripts write it
# The lab's controllers keep it where Debian's Slurm does. No other path is admitted: the
# document runs as root, and the node script checks the file name again.
CONF_PATH_PATTERN = r"^(/opt/slurm/etc|/etc/slurm)/slurmdbd\.conf$"
# HyperPod's SlurmUser is "slurm"; the lab's slurmdbd.conf belongs to root.
OWNER_PATTERN = r"^(slurm|root)$"
SECRET_ARN_PATTERN = r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+$"  # noqa: S105 (an ARN pattern)

# The document's parameters. Their values are pasted into a `sh -c "..."` line run as root, so
# each admits only what this project needs (and never quotes, `$`, backticks, backslashes or
# spaces). The service is not a parameter: the node script restarts slurmdbd and nothing else.
# In template.yaml the stack narrows secretId further, to its own secret's ARN.
DOCUMENT_PARAMETERS: dict[str, dict[str, str]] = {
    "secretId": {
        "type": "String",
        "description": "ARN of the database secret; the node reads its AWSCURRENT version itself",
        "allowedPattern": SECRET_ARN_PATTERN,
    },
    "confPath": {
        "type": "String",
        "description": "The controller's local slurmdbd.conf",
        "default": DEFAULT_CONF_PATH,
        "allowedPattern": CONF_PATH_PATTERN,
    },
    "owner": {
        "type": "String",
        "description": "SlurmUser, who owns slurmdbd.conf (mode 600)",
        "default": "slurm",
        "allowedPattern": OWNER_PATTERN,
    },
    "verifySeconds": {
        "type": "String",
        "description": "How long to wait for slurmdbd to answer after the restart",
        "default": "45",
        "allowedPattern": r"^[0-9]{1,3}$",
    },
}


def secret_arn_pattern(secret_arn: str) -> str:
    """The ``allowedPattern`` admitting exactly ``secret_arn`` (template.yaml builds the same
    with Fn::Split/Fn::Join: of an ARN's characters only ``.`` and ``+`` mean something)."""
    return "^" + secret_arn.replace(".", "\\.").replace("+", "\\+") + "$"


def _encoded_script() -> str:
    # mtime=0: the same script always gives the same document (template drift is testable).
    return base64.b64encode(gzip.compress(NODE_SCRIPT.read_bytes(), mtime=0)).decode("ascii")


def node_command() -> str:
    """The one command line both documents run (``{{ name }}`` is SSM's parameter syntax)."""
    arguments = " ".join(f"{{{{ {name} }}}}" for name in DOCUMENT_PARAMETERS)
    return f'/bin/sh -c "echo {_encoded_script()} | base64 -d | gzip -dc | python3 - {arguments}"'


class DocumentParametersInvalid(InputRejected):
    """A parameter value the document's ``allowedPattern`` refuses (SSM would refuse it too)."""


def render_node_command(parameters: Mapping[str, list[str]]) -> str:
    """The command line SSM would run: defaults filled in, every value checked against its
    ``allowedPattern`` first (as SSM does; the values end up inside ``sh -c "..."``)."""
    rendered = node_command()
    for name, spec in DOCUMENT_PARAMETERS.items():
        values = parameters.get(name) or ([spec["default"]] if "default" in spec else [])
        if len(values) != 1:
            raise DocumentParametersInvalid(f"parameter {name!r} needs exactly one value")
        if not re.fullmatch(spec["allowedPattern"], values[0]):
            raise DocumentParametersInvalid(f"parameter {name!r} does not match its allowedPattern")
        rendered = rendered.replace(f"{{{{ {name} }}}}", values[0])
    unknown = set(parameters) - set(DOCUMENT_PARAMETERS)
    if unknown:
        raise DocumentParametersInvalid(f"unknown parameters {sorted(unknown)}")
    return rendered


def session_document() -> dict[str, Any]:
    """Content of the Session document (StartSession: HyperPod targets)."""
    return {
        "schemaVersion": "1.0",
        "description": "hyperpod-ha: point slurmdbd at the database secret's AWSCURRENT credentials",
        "sessionType": "NonInteractiveCommands",
        "parameters": DOCUMENT_PARAMETERS,
        "properties": {
            "linux": {"commands": node_command(), "runAsElevated": True, "separateOutputStream": True}
        },
    }


def command_document() -> dict[str, Any]:
    """Content of the Command document (SendCommand: EC2 and hybrid managed instances)."""
    return {
        "schemaVersion": "2.2",
        "description": "hyperpod-ha: point slurmdbd at the database secret's AWSCURRENT credentials",
        "parameters": DOCUMENT_PARAMETERS,
        "mainSteps": [
            {
                "action": "aws:runShellScript",
                "name": "slurmdbdCredentials",
                "inputs": {"runCommand": [node_command()], "timeoutSeconds": "300"},
            }
        ],
    }


class InvalidControllers(InputRejected):
    """The controllers list is empty or a controller lacks ``instance_id``/``target``."""


class NodeReportInvalid(InputRejected):
    """The node script's output has no report line we can read."""


# The generic AWS document takes the whole command line as its parameter. Only the lab's
# transport (and tests) use it: in an account, IAM allows this function's own document only.
GENERIC_DOCUMENT = "AWS-StartNonInteractiveCommand"


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
        data: dict[str, Any] = {
            "instance_id": self.instance_id,
            "target": self.target,
            "outcome": self.outcome,
        }
        for key in ("reason", "storage_user", "restored_previous", "seconds_to_answer"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data


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


def parse_node_report(result: CommandResult) -> dict[str, Any]:
    """The node script's last JSON line, cross-checked with the exit code when there is one."""
    for raw in reversed(result.stdout.splitlines()):
        line = raw.strip()
        if not line.startswith("{"):
            continue
        try:
            report = json.loads(line)
        except ValueError:
            continue
        if isinstance(report, dict) and report.get("outcome") in ("updated", "failed"):
            if report["outcome"] == "updated" and result.exit_code not in (0, None):
                raise NodeReportInvalid(f"the node reported success but exited {result.exit_code}")
            return report
    tail = (result.stderr or "").strip().splitlines()[-1:] or ["no stderr"]
    raise NodeReportInvalid(
        f"the node script printed no report (exit code {result.exit_code}; {tail[0][:200]})"
    )


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
            storage_user=str(report.get("storage_user")),
            seconds_to_answer=report.get("seconds_to_answer"),
        )
    return ControllerRollout(
        instance_id,
        target,
        "failed",
        f"{report.get('stage', 'unknown')}: {report.get('reason', 'no reason given')}",
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
