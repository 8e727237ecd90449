"""Which controllers a roll-out updates, and in which order."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hyperpod_ha.controllers.models import RUNNING, Controller
from hyperpod_ha.rotation.errors import RotationRequestInvalid


def given_controllers(value: object) -> list[dict[str, Any]]:
    """The event's ``controllers`` (each one is checked by the roll-out itself)."""
    if not isinstance(value, list):
        raise RotationRequestInvalid("'controllers' must be a list of controller objects")
    return value


def running_first(found: Iterable[Controller]) -> list[dict[str, Any]]:
    # A controller being replaced fails its turn, and the roll-out stops there, so it should
    # not hold up the healthy ones.
    return sorted((c.to_json() for c in found), key=lambda c: c["status"] != RUNNING)
