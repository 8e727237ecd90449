"""Which controllers a roll-out updates, and in which order."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hyperpod_ha.controllers.models import RUNNING, Controller
from hyperpod_ha.rotation.errors import RotationRequestInvalid

# A cluster has a handful of controllers; a longer list is not a request of this project.
MAX_GIVEN = 64


def check_given(value: object) -> list[object]:
    """The event's ``controllers``, checked to be a list before anything is discovered."""
    if not isinstance(value, list):
        raise RotationRequestInvalid("'controllers' must be a list of controller objects")
    if len(value) > MAX_GIVEN:
        raise RotationRequestInvalid(f"'controllers' names more than {MAX_GIVEN} controllers")
    return value


def given_controllers(value: object, found: Iterable[Controller]) -> list[dict[str, Any]]:
    """The discovered controllers the event's ``controllers`` name (by ``instance_id``), in its
    order. The request only chooses among them: every target comes from discovery, so a request
    cannot send the roll-out to another cluster's node (issue 22)."""
    known = {controller.instance_id: controller for controller in found}
    chosen: list[dict[str, Any]] = []
    for item in check_given(value):
        instance_id = item.get("instance_id") if isinstance(item, Mapping) else None
        controller = known.get(instance_id) if isinstance(instance_id, str) else None
        target = item.get("target") if isinstance(item, Mapping) else None
        if controller is None or target not in (None, controller.target):
            raise RotationRequestInvalid(
                "'controllers' names a node that is not a discovered controller of this cluster"
            )
        chosen.append(controller.to_json())
    return chosen


def running_first(found: Iterable[Controller]) -> list[dict[str, Any]]:
    # A controller being replaced fails its turn, and the roll-out stops there, so it should
    # not hold up the healthy ones.
    return sorted((c.to_json() for c in found), key=lambda c: c["status"] != RUNNING)
