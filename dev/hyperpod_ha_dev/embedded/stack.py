"""The stack of ``template.yaml`` on moto, in process, as ``sam deploy`` would create it:
SAM's own translator (:mod:`.sam`), then moto's own CloudFormation, with small named shims for
what moto's CloudFormation lacks (:mod:`.shims`). The result is an :class:`.EmbeddedStack`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import boto3

from hyperpod_ha_cli.configure.parameters import parameter_specs, validate
from hyperpod_ha_dev.embedded import delivery, shims
from hyperpod_ha_dev.embedded.account import ACCOUNT, REGION
from hyperpod_ha_dev.embedded.created_stack import EmbeddedStack, Physical
from hyperpod_ha_dev.embedded.function_spec import function_spec, parameter_text, zip_sources
from hyperpod_ha_dev.embedded.functions import FunctionSpec, new_containers
from hyperpod_ha_dev.embedded.sam import PACKAGED_BUCKET, local_code, translate
from hyperpod_ha_stack.template import TemplateError

__all__ = ["ACCOUNT", "REGION", "EmbeddedStack", "create_stack", "function_spec"]

_CODE = {"AWS::Lambda::Function": "Code", "AWS::Lambda::LayerVersion": "Content"}


def create_stack(
    root: Path, parameters: Mapping[str, Any], name: str = "hyperpod-ha", region: str = REGION
) -> EmbeddedStack:
    """Create the stack of ``root/template.yaml``; call inside
    :func:`~hyperpod_ha_dev.embedded.site.embedded_aws` (or beside a moto server of this process)."""
    from moto.cloudformation.models import cloudformation_backends

    new_containers()
    values = {key: parameter_text(value) for key, value in parameters.items()}
    body = _translated((root / "template.yaml").read_text(), str(root), json.dumps(values, sort_keys=True))
    template = json.loads(body)
    _check(template, values)
    _package(root, template, region)
    with shims.registered():
        created = cloudformation_backends[ACCOUNT][region].create_stack(
            name=name, template=body, parameters=values
        )
    # As ListStackResources: moto answers None for a resource whose condition is false, and some
    # of its models (Permission) have no physical id.
    models: list[Any] = [model for model in created.stack_resources if model is not None]
    resources = {
        m.logical_resource_id: Physical(getattr(m, "physical_resource_id", ""), m.cf_resource_type)
        for m in models
    }
    lambda_ = boto3.client("lambda", region_name=region)
    functions = {
        logical_id: _function(lambda_, root, logical_id, created.resource_map[logical_id])
        for logical_id, physical in resources.items()
        if physical.type == "AWS::Lambda::Function"
    }
    outputs = {output["OutputKey"]: output["OutputValue"] for output in created.outputs or []}
    return EmbeddedStack(name, root, dict(created.stack_parameters), resources, functions, outputs)


@functools.lru_cache(maxsize=16)
def _translated(source: str, root: str, values: str) -> str:
    """The translation as JSON text, once per template text and parameters (tests create many)."""
    del source  # the cache key: the template file's text
    return json.dumps(translate(Path(root) / "template.yaml", json.loads(values)))


def _check(template: Mapping[str, Any], values: Mapping[str, str]) -> None:
    """What CloudFormation refuses before creating anything, and moto does not check."""
    specs = parameter_specs(template.get("Parameters", {}))
    unknown = sorted(set(values) - set(specs))
    if unknown:
        raise TemplateError(f"parameters {unknown} are not in the template")
    for key, value in values.items():
        validate(specs[key], value)
    missing = shims.unsupported(template["Resources"])
    if missing:
        raise TemplateError(
            f"the embedded stack cannot create {', '.join(missing)}: moto has no CloudFormation "
            "model for it and no shim stands in (hyperpod_ha_dev.embedded.shims)"
        )


def _package(root: Path, template: Mapping[str, Any], region: str) -> None:
    """The code where ``sam package`` would have put it: each function's and layer's, zipped."""
    s3 = boto3.client("s3", region_name=region)
    location: Any = (
        {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
    )
    s3.create_bucket(Bucket=PACKAGED_BUCKET, **location)
    for resource in template["Resources"].values():
        code = resource.get("Properties", {}).get(_CODE.get(resource["Type"], ""))
        if code:
            s3.put_object(
                Bucket=code["S3Bucket"], Key=code["S3Key"], Body=zip_sources(local_code(root, code))
            )


def _function(lambda_: Any, root: Path, logical_id: str, created: Any) -> FunctionSpec:
    """A created function as its handler runs: the shim's resolved properties, moto's retries."""
    name = created.physical_resource_id
    try:
        retries = int(lambda_.get_function_event_invoke_config(FunctionName=name)["MaximumRetryAttempts"])
    except lambda_.exceptions.ResourceNotFoundException:
        retries = 2  # Lambda's default for asynchronous invocations
    spec = function_spec(root, logical_id, name, created.attributes["Arn"], created.properties, retries)
    delivery.register(spec)
    return spec
