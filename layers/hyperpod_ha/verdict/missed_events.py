"""The failover topic's blind spot: publishes of HyperPod's ON/OFF program that failed.

The program appends each failed publish to notification_attempts.log on the shared file system;
a failover whose message failed started no run. Failures appended within
:data:`MISSED_EVENT_SECONDS` are a note beside the verdict (never weighed: the controllers'
evidence decides) and a gauge on the dashboard (``ControllerNotificationsFailed``)."""

from __future__ import annotations

from typing import Final

from hyperpod_ha.human_time import ago
from hyperpod_ha.verdict.observation import Observation

# How recent a failed publish is news: the watchdog's checks come every few minutes, an hour
# keeps one check's miss in view of the next ones.
MISSED_EVENT_SECONDS: Final = 3600


def missed_events(seen: Observation) -> tuple[int, list[str]]:
    """The failed publishes in view (the file is shared: counted once per path) and their notes."""
    count, notes, paths = 0, [], set()
    for report in seen.checked:
        found = report.notify_failures
        if not found.failures or found.age_seconds is None or found.age_seconds > MISSED_EVENT_SECONDS:
            continue
        if found.path in paths:
            continue
        paths.add(found.path)
        count += found.failures
        notes.append(
            f"the failover topic missed events: {found.failures} publish(es) of the ON/OFF program failed, "
            f"the last {ago(found.age_seconds)} ({found.path}): {found.last_failure or 'no line kept'}"
        )
    return count, notes
