"""How long creating the embedded stack takes: ``create_stack`` (SAM's translation, the code
packaged, moto's own CloudFormation with the shims) on the site every test and simulation uses.

The first creation in a process translates template.yaml; the next reuse the translation, as a
test session or a simulation does. Seconds on this machine, the median of :data:`ROUNDS` after
the first; the target is a bound for a fixture made hundreds of times per test run.
"""

from __future__ import annotations

import time
from typing import Any, Final

from bench import ROOT
from bench.stats import at_most, median

ROUNDS: Final = 5
TARGET_SECONDS: Final = 10.0


def _create_once() -> tuple[float, int]:
    from hyperpod_ha_dev.embedded.site import create_site, embedded_aws
    from hyperpod_ha_dev.embedded.stack import create_stack

    with embedded_aws():
        site = create_site()
        started = time.perf_counter()
        stack = create_stack(ROOT, site.stack_parameters())
        seconds = time.perf_counter() - started
        stack.stop_running_executions()
        return seconds, len(stack.resources)


def measure() -> dict[str, Any]:
    from hyperpod_ha_dev.embedded import stack

    stack._translated.cache_clear()  # the first creation translates, as a new process would
    first, resources = _create_once()
    rest = [_create_once()[0] for _ in range(ROUNDS)]
    return at_most(
        round(median(rest), 2),
        TARGET_SECONDS,
        unit="seconds",
        first_seconds=round(first, 2),
        rounds=ROUNDS,
        resources=resources,
    )
