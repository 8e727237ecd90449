"""What every unit test gets: no metric left behind for the next one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def no_metrics_left_over() -> Iterator[None]:
    """A metric a test adds outside a handler (a watchdog setting refused, say) would otherwise
    be flushed into whichever handler runs next in this process."""
    yield
    from hyperpod_ha.observability import metrics

    metrics.clear_metrics()
