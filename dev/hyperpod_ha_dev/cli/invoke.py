"""``hyperpod-ha invoke``: a template function's real handler, in process, like ``sam local invoke``.

With ``--embedded`` the stack from template.yaml is created on moto first. Otherwise the
handler runs against the AWS endpoint of the environment (``AWS_ENDPOINT_URL`` for a
moto_server or LocalStack, else the account of ``--region``/``--profile`` or samconfig.toml's),
with the environment the template gives the function, filled from ``--env-vars`` and from the
deployed stack's resources. Exit 0 when the handler returned, 1 when it raised (its error as
JSON on stdout, as Lambda reports it), 2 for an unknown function or an unreadable event.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from hyperpod_ha_cli.errors import UsageError
from hyperpod_ha_dev.cli import project_root, result_stream

# moto's words for an API it lacks, e.g. "The start_session action has not been implemented".
_NOT_IMPLEMENTED = re.compile(r"The (?P<action>\w+) action has not been implemented")


def read_event(path: Path) -> Any:
    try:
        text = sys.stdin.read() if str(path) == "-" else path.read_text()
    except OSError as error:
        raise UsageError(f"cannot read the event {path}: {error.strerror or error}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"{path} is not JSON: {error}") from None


def template_functions(root: Path) -> list[str]:
    from hyperpod_ha_stack.template import load_template

    resources = load_template(root / "template.yaml").get("Resources", {})
    return sorted(name for name, r in resources.items() if r.get("Type") == "AWS::Serverless::Function")


def run_invoke(args: argparse.Namespace) -> int:
    from hyperpod_ha_dev.embedded.functions import FunctionError, invoke

    root = project_root()
    known = template_functions(root)
    if args.function not in known:
        raise UsageError(f"{args.function} is not a function of the template; known: {', '.join(known)}")
    event = read_event(args.event)
    if args.env_vars is not None:
        read_overrides(args.env_vars)  # a bad file is refused before anything is created
    out = result_stream()
    try:
        if args.embedded:
            result = _invoke_embedded(root, args, event)
        else:
            from hyperpod_ha_dev.cli.deployed import deployed_function, offline_function, use_account

            use_account(root, args.region, args.profile)
            if args.env_vars is not None and args.stack_name is None:
                spec = offline_function(root, args.function)
            else:
                spec = deployed_function(root, args.function, args.stack_name)
            result = invoke(_with_overrides(spec, args.env_vars), event)
    except FunctionError as error:
        print(json.dumps(error.payload()), file=out)
        out.flush()
        _explain(args, error.payload())
        return 1
    print(json.dumps(result, indent=2), file=out)
    out.flush()
    return 0


def _invoke_embedded(root: Path, args: argparse.Namespace, event: Any) -> Any:
    from hyperpod_ha_dev.embedded.functions import invoke
    from hyperpod_ha_dev.embedded.site import create_site, embedded_aws
    from hyperpod_ha_dev.embedded.stack import create_stack

    with embedded_aws():
        site = create_site()
        stack = create_stack(root, site.stack_parameters())
        try:
            return invoke(_with_overrides(stack.function(args.function), args.env_vars), event)
        finally:
            stack.stop_running_executions()


def _explain(args: argparse.Namespace, payload: dict[str, Any]) -> None:
    """The handler raised: one line on stderr, with what to use where moto lacks an API."""
    message = str(payload.get("errorMessage", ""))
    missing = _NOT_IMPLEMENTED.search(message)
    if missing and args.embedded:
        print(
            f"hyperpod-ha: invoke: {args.function} calls {missing['action']}, which the embedded stack "
            "(moto) does not have: run it on the local stand-in (hyperpod-ha local up --env-vars FILE, "
            f"then sam local invoke {args.function} --env-vars FILE ...), or the whole workflow on "
            "simulated controllers (hyperpod-ha simulate list)",
            file=sys.stderr,
        )
        return
    print(
        f"hyperpod-ha: invoke: {args.function} raised {payload.get('errorType')}: {message}",
        file=sys.stderr,
    )


def read_overrides(env_vars: Path) -> dict[str, Any]:
    try:
        overrides = json.loads(env_vars.read_text())
    except OSError as error:
        raise UsageError(f"cannot read {env_vars}: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise UsageError(f"{env_vars} is not JSON: {error}") from None
    if not isinstance(overrides, dict):
        raise UsageError(f"{env_vars} is not sam local's --env-vars format (a JSON object)")
    return overrides


def _with_overrides(spec: Any, env_vars: Path | None) -> Any:
    """``sam local invoke --env-vars`` format: {"Parameters": {...}, "<LogicalId>": {...}}."""
    if env_vars is None:
        return spec
    from dataclasses import replace

    overrides = read_overrides(env_vars)
    environment = {
        **spec.environment,
        **overrides.get("Parameters", {}),
        **overrides.get(spec.logical_id, {}),
    }
    return replace(spec, environment={key: str(value) for key, value in environment.items()})
