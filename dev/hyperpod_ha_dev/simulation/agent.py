"""What the SSM agent runs for a request: the command line a Session document (or the
``AWS-StartNonInteractiveCommand`` parameter) resolves to. The simulated cluster and the lab
both run exactly that, so the stack's own documents are what the tests exercise."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from hyperpod_ha.commands import CommandRequest, InvalidCommandRequest

NON_INTERACTIVE_DOCUMENT = "AWS-StartNonInteractiveCommand"


class DocumentParametersRejected(InvalidCommandRequest):
    """A request's parameters do not fit its document (SSM would refuse the session)."""


def agent_command_line(request: CommandRequest, ssm: Any) -> str:
    """The command line the SSM agent would run for ``request``.

    ``AWS-StartNonInteractiveCommand`` runs its ``command`` parameter. A Session document of
    our own (the probe, the slurmdbd roll-out) runs its fixed ``commands`` with every
    ``{{ name }}`` replaced by the request's value or the parameter's default, each value
    checked against the parameter's ``allowedPattern`` first, as SSM does.
    """
    if request.document == NON_INTERACTIVE_DOCUMENT:
        given = request.parameters.get("command", [])
        if len(given) != 1:
            raise DocumentParametersRejected(f"{NON_INTERACTIVE_DOCUMENT} needs exactly one 'command'")
        return given[0]
    content = json.loads(ssm.get_document(Name=request.document)["Content"])
    command = content.get("properties", {}).get("linux", {}).get("commands")
    if not isinstance(command, str) or not command:
        raise DocumentParametersRejected(f"document {request.document} has no linux commands")
    declared: Mapping[str, Mapping[str, Any]] = content.get("parameters", {})
    unknown = sorted(set(request.parameters) - set(declared))
    if unknown:
        raise DocumentParametersRejected(f"document {request.document} has no parameters {unknown}")
    for name, spec in declared.items():
        values = request.parameters.get(name) or ([str(spec["default"])] if "default" in spec else [])
        if len(values) != 1:
            raise DocumentParametersRejected(f"parameter {name!r} needs exactly one value")
        pattern = spec.get("allowedPattern")
        if pattern and re.search(pattern, values[0]) is None:
            raise DocumentParametersRejected(f"parameter {name!r} does not match its allowedPattern")
        value = values[0]
        command = re.sub(r"\{\{\s*" + re.escape(name) + r"\s*\}\}", _literal(value), command)
    return command


def _literal(value: str) -> Callable[[re.Match[str]], str]:
    # A function, not a replacement string: re.sub would read backslashes in the value.
    return lambda _: value
