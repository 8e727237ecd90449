"""Small, named shims for what moto's CloudFormation lacks, one module each (saying what moto
lacks, checked with moto 5.2.5), put before moto's own models while the stack is created.

moto registers a model by subclassing ``CloudFormationModel``, for every later use in the process;
these stand before moto's lookup only during the creation (``registered``). A resource type that
neither moto nor a shim creates, and that ``NO_EFFECT`` does not list with the reason, is refused
before anything is created (``unsupported``): moto would skip it with a warning."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

from hyperpod_ha_dev.embedded.patching import applied
from hyperpod_ha_dev.embedded.shims.alarm import Alarm
from hyperpod_ha_dev.embedded.shims.api_destination import ApiDestination, Connection
from hyperpod_ha_dev.embedded.shims.document import Document
from hyperpod_ha_dev.embedded.shims.function import Function, LayerVersion
from hyperpod_ha_dev.embedded.shims.intrinsics import clean_json_as_cloudformation, equals_as_text
from hyperpod_ha_dev.embedded.shims.invoke_config import EventInvokeConfig
from hyperpod_ha_dev.embedded.shims.model import Shim, client
from hyperpod_ha_dev.embedded.shims.pipe import Pipe
from hyperpod_ha_dev.embedded.shims.policy_documents import KEY, ROLE
from hyperpod_ha_dev.embedded.shims.rotation_schedule import RotationSchedule
from hyperpod_ha_dev.embedded.shims.schedule import Schedule
from hyperpod_ha_dev.embedded.shims.state_machine import StateMachine
from hyperpod_ha_dev.embedded.shims.subscription import Subscription

SHIMS: dict[str, Any] = {
    shim.cloudformation_type(): shim
    for shim in (
        Alarm,
        ApiDestination,
        Connection,
        Document,
        EventInvokeConfig,
        Function,
        KEY,
        LayerVersion,
        Pipe,
        ROLE,
        RotationSchedule,
        Schedule,
        StateMachine,
        Subscription,
    )
}
# Kept in the stack (Ref answers a name), created nowhere: moto would change nothing it does.
NO_EFFECT: dict[str, str] = {
    "AWS::SQS::QueuePolicy": "moto never evaluates a queue's policy: who may send is not checked",
    "AWS::SNS::TopicPolicy": "moto never evaluates a topic's policy: who may publish is not checked",
}


def unsupported(resources: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Each resource whose type moto would skip, as ``Type (LogicalId)``, whatever its condition:
    neither one of moto's models nor a shim creates it, and it is not in ``NO_EFFECT``."""
    from moto.cloudformation.parsing import get_model_map

    known = {*get_model_map(), *SHIMS, *NO_EFFECT}
    return [f"{r['Type']} ({logical_id})" for logical_id, r in resources.items() if r["Type"] not in known]


def name(resource_type: str, stack_name: str, logical_id: str) -> str:
    """An unnamed resource's name: ``<stack>-<LogicalId>``, without the random suffix CloudFormation
    (and moto) add, so the sample events in ``events/`` name this stack's state machine."""
    return f"{stack_name}-{logical_id}"[:64]


@contextlib.contextmanager
def registered() -> Iterator[None]:
    """moto's CloudFormation, with the shims' models before its own, the intrinsic functions as
    CloudFormation evaluates them (:mod:`.intrinsics`), :func:`name` for names, and templates read
    as JSON (moto reads a body as YAML first, in pure Python: 0.3 s for this one)."""
    from moto.cloudformation import parsing
    from moto.cloudformation.models import Stack

    moto_model = parsing.resource_class_from_type

    def model(resource_type: str) -> Any:
        if resource_type in NO_EFFECT:
            return Shim
        return SHIMS.get(resource_type) or moto_model(resource_type)

    patches = [
        equals_as_text(),
        clean_json_as_cloudformation(),
        (parsing, "resource_class_from_type", model),
        (parsing, "generate_resource_name", name),
        (Stack, "parse_template", staticmethod(json.loads)),
    ]
    try:
        with applied(patches):
            yield
    finally:
        client.cache_clear()
