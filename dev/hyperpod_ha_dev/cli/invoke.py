"""``hyperpod-ha invoke``: a template function's real handler, in process, like ``sam local invoke``.

With ``--embedded`` the stack from template.yaml is created on moto first. Otherwise the
handler runs against the AWS endpoint of the environment (``AWS_ENDPOINT_URL`` for a
moto_server or LocalStack, else the account of the credentials), with the environment the
template gives the function, filled from ``--env-vars`` and from the deployed stack's resources.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from hyperpod_ha_dev.cli import project_root, result_stream


def read_event(path: Path) -> Any:
    text = sys.stdin.read() if str(path) == "-" else path.read_text()
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SystemExit(f"hyperpod-ha: {path} is not JSON: {error}") from None


def run_invoke(args: argparse.Namespace) -> int:
    from hyperpod_ha_dev.embedded.functions import FunctionError, invoke

    root = project_root()
    event = read_event(args.event)
    out = result_stream()
    if args.embedded:
        from hyperpod_ha_dev.embedded.site import create_site, embedded_aws
        from hyperpod_ha_dev.embedded.stack import create_stack

        with embedded_aws():
            site = create_site()
            stack = create_stack(root, site.stack_parameters())
            spec = stack.function(args.function)
            spec = _with_overrides(spec, args.env_vars)
            try:
                result = invoke(spec, event)
            except FunctionError as error:
                print(json.dumps(error.payload()), file=out)
                return 1
            finally:
                stack.stop_running_executions()
    else:
        from hyperpod_ha_dev.cli.deployed import deployed_function, offline_function

        if args.env_vars is not None and args.stack_name is None:
            spec = offline_function(root, args.function)
        else:
            spec = deployed_function(root, args.function, args.stack_name)
        spec = _with_overrides(spec, args.env_vars)
        try:
            result = invoke(spec, event)
        except FunctionError as error:
            print(json.dumps(error.payload()), file=out)
            return 1
    print(json.dumps(result, indent=2), file=out)
    out.flush()
    return 0


def _with_overrides(spec: Any, env_vars: Path | None) -> Any:
    """``sam local invoke --env-vars`` format: {"Parameters": {...}, "<LogicalId>": {...}}."""
    if env_vars is None:
        return spec
    from dataclasses import replace

    overrides = json.loads(env_vars.read_text())
    environment = {
        **spec.environment,
        **overrides.get("Parameters", {}),
        **overrides.get(spec.logical_id, {}),
    }
    return replace(spec, environment={key: str(value) for key, value in environment.items()})
