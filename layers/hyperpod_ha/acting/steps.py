"""One step of a drill's or a restore's state machine: chosen by the event's ``action`` and
logged the same way (the action on every line, a failure's type and reason, a few keys of the
result)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from hyperpod_ha.errors import HyperpodHaError, InputRejected
from hyperpod_ha.observability import logger

Context = TypeVar("Context")
Step = Callable[[Mapping[str, Any], Context], dict[str, Any]]


def by_action(*steps: Step[Context]) -> dict[str, Step[Context]]:
    """Each step under its action: its function's name, ``_`` written ``-`` (``check_jobs``:
    ``check-jobs``), as the state machine names it."""
    return {step.__name__.replace("_", "-"): step for step in steps}


def run_step(
    steps: Mapping[str, Step[Context]], event: object, context: Context, rejected: type[InputRejected]
) -> dict[str, Any]:
    """The step the event's ``action`` names, run; ``rejected`` for an event that names none."""
    if not isinstance(event, Mapping) or event.get("action") not in steps:
        raise rejected(f"action must be one of {', '.join(steps)}")
    return steps[str(event["action"])](event, context)


def logged_step(
    what: str,
    event: object,
    step: Callable[[object], dict[str, Any]],
    failed: tuple[type[HyperpodHaError], ...],
    keys: tuple[str, ...],
) -> dict[str, Any]:
    """``step(event)``, logged as ``<what> step done`` with ``keys`` of its result, or as
    ``<what> step failed`` with the reason of one of ``failed`` (raised again for the state
    machine's Catch)."""
    logger.append_keys(action=event.get("action") if isinstance(event, Mapping) else None)
    try:
        result = step(event)
    except failed as error:
        logger.warning(
            f"{what} step failed", extra={"error_type": type(error).__name__, "reason": str(error)}
        )
        raise
    logger.info(f"{what} step done", extra={key: result.get(key) for key in keys})
    return result
