"""Following a Step Functions execution (``runbook``, ``restore`` and ``drill start --follow``).

Its status is polled until it ends; its history is read whole as it grows (a long run's has
more events than one page of ``GetExecutionHistory`` holds), each event handed over once, and
the states are shown as they run (:class:`StateView`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

import boto3

from hyperpod_ha_cli.text import reason_lines

POLL_SECONDS = 2.0
# One state per controller, entered again at every check: the per-state lines leave it out.
PROBE_STATES = "Run the probe"

Event = dict[str, Any]


class StateView:
    """Plain lines, or in a terminal one line per state plus a live status line."""

    def __init__(self, out: TextIO, live: bool) -> None:
        self._out = out
        self._live = live
        self._started = time.monotonic()

    def state(self, timestamp: str, name: str, detail: str = "", reasons: tuple[str, ...] = ()) -> None:
        self._clear()
        self._out.write(f"{timestamp}  {name}{'  ' + detail if detail else ''}\n")
        for line in reason_lines(reasons, indent=" " * 14):
            self._out.write(f"{line}\n")
        self._out.flush()

    def entered(self, event: Event) -> None:
        """The state ``event`` entered, if it entered one other than a probe's."""
        entered = event.get("stateEnteredEventDetails")
        if entered and not entered["name"].startswith(PROBE_STATES):
            self.state(event["timestamp"].strftime("%H:%M:%S"), entered["name"])

    def waiting(self, current: str) -> None:
        if self._live:
            self._clear()
            self._out.write(f"  ... {current} ({time.monotonic() - self._started:.0f} s)")
            self._out.flush()

    def _clear(self) -> None:
        if self._live:
            self._out.write("\r\033[K")


class ExecutionHistory:
    """An execution's history events, oldest first, read whole. Each read asks only for what came
    since the last: newest first (``reverseOrder``), page by page through botocore's paginator,
    until a page holds an event already read (event ids count up from 1)."""

    def __init__(self, sfn: Any, execution_arn: str) -> None:
        self._sfn = sfn
        self._execution_arn = execution_arn
        self.events: list[Event] = []

    def read_new(self) -> list[Event]:
        """The events not read before, oldest first (also appended to :attr:`events`)."""
        last = self.events[-1]["id"] if self.events else 0
        new: list[Event] = []
        paginator = self._sfn.get_paginator("get_execution_history")
        for page in paginator.paginate(executionArn=self._execution_arn, reverseOrder=True):
            new += [event for event in page["events"] if event["id"] > last]
            if any(event["id"] <= last for event in page["events"]):
                break
        # By id, whatever order the pages came in (moto 5.2.5 ignores reverseOrder: one page, oldest first).
        new.sort(key=lambda event: int(event["id"]))
        self.events += new
        return new


def follow_execution(
    execution_arn: str,
    show: Callable[[Event], None] | None,
    waiting: Callable[[], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[Mapping[str, Any], list[Event]]:
    """Poll the execution until it is no longer RUNNING: ``show`` gets each new history event,
    oldest first (without it the history is not read), ``waiting`` is called before each pause.
    Returns its last description and its whole history (empty without ``show``)."""
    sfn = boto3.client("stepfunctions")
    history = ExecutionHistory(sfn, execution_arn)
    while True:
        # The status first: once it is final, the history read after it is complete.
        described = sfn.describe_execution(executionArn=execution_arn)
        if show is not None:
            for event in history.read_new():
                show(event)
        if described["status"] != "RUNNING":
            return described, history.events
        if waiting is not None:
            waiting()
        sleep(POLL_SECONDS)
