"""A lab scenario in progress: the lab, the embedded run, what happened when, what was checked."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from hyperpod_ha.slurm import (
    parse_role_log,
)
from hyperpod_ha.trigger import Trigger
from hyperpod_ha_dev.simulation.engine import EmbeddedRun
from hyperpod_ha_dev.simulation.lab.operator_run import operator_runs
from hyperpod_ha_dev.simulation.lab.polling import poll
from hyperpod_ha_dev.simulation.lab.probes import (
    controller_names,
)
from hyperpod_ha_dev.simulation.timeline import TimelineEntry
from hyperpod_lab import Lab
from hyperpod_lab.topology import SLURMCTLD_TIMEOUT_SECONDS

# A takeover needs SlurmctldTimeout without an answer plus the backup's next check; the
# margin absorbs a loaded two-core machine.
TAKEOVER_WAIT_SECONDS: Final = SLURMCTLD_TIMEOUT_SECONDS + 20
TAKE_BACK_SECONDS: Final = 60.0


@dataclass(frozen=True)
class Check:
    """Something a lab scenario verified beyond the verdict."""

    name: str
    passed: bool
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


def on_message(address: str) -> str:
    """What SlurmctldPrimaryOnProg publishes (the comma after ON is really there)."""
    return f"Slurm Controller is ON, ({address}, Primary Node)"


def off_message(address: str, role: str = "Primary") -> str:
    return f"Slurm Controller is OFF ({address}, {role} Node)"


class Drill:
    """A scenario in progress: the lab, the embedded run, and what happened when."""

    def __init__(self, lab: Lab, run: EmbeddedRun) -> None:
        self.lab = lab
        self.run = run
        self.entries: list[TimelineEntry] = []
        self.checks: list[Check] = []
        self.fault: str | None = None
        self.fault_at: float | None = None
        self.takeover_seconds: float | None = None
        self.details: dict[str, Any] = {}
        self.offsets: dict[str, int] = {}  # log offsets a check after the workflow reads from
        self.controllers = controller_names(lab)
        self.primary, self.backup = self.controllers[:2]

    def address(self, host: str) -> str:
        return self.lab.topology.host(host).address

    def note(self, what: str, detail: str = "", at: float | None = None) -> None:
        self.entries.append(
            TimelineEntry((at if at is not None else time.time()) - self.run.started, what, detail)
        )

    def check(self, name: str, passed: bool, detail: str = "") -> None:
        self.checks.append(Check(name, passed, detail))
        self.note(
            "  lab check", f"{'ok' if passed else 'FAILED'}: {name}" + (f" ({detail})" if detail else "")
        )

    def inject(self, what: str, action: Callable[[], object]) -> None:
        self.fault = what
        self.fault_at = time.time()
        action()
        self.note("fault", what, at=self.fault_at)

    def notify(self, message: str) -> None:
        """Publish what a lifecycle script would, on the cluster's failover topic."""
        self.run.notify(message)
        self.note("lifecycle script publishes", message)

    def operator_run(self, reason: str) -> None:
        """Start a verification as ``hyperpod-ha runbook start`` does (no notification exists
        for this fault: the lifecycle scripts only report controllers turning ON or OFF)."""
        stack = self.run.stack
        # The scenario's parameters, or the template's defaults.
        runs = operator_runs(stack, stack.parameters)
        now = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        decision = runs.start_or_join(
            str(stack.parameters["ClusterName"]),
            Trigger("operator", uuid.uuid4().hex, {"reason": reason}, now),
            reason,
        )
        self.note("operator run", f"{decision.outcome}: {reason}")

    def log_offset(self, host: str) -> int:
        return len(self.lab.log(host))

    def wait_for_role(self, host: str, offset: int, role: str, timeout: float) -> float | None:
        """When ``host`` logged ``role`` after ``offset`` (epoch seconds), or None."""

        def logged() -> float | None:
            lines = parse_role_log(self.lab.log(host)[offset:]).lines
            return time.time() if any(line.event == role for line in lines) else None

        return poll(logged, timeout, interval=0.1)

    def notify_after_takeover(self, host: str, offset: int) -> None:
        """SlurmctldPrimaryOnProg runs when the backup becomes the primary: publish then."""
        seen = self.wait_for_role(host, offset, "primary", TAKEOVER_WAIT_SECONDS)
        if seen is None:
            self.note(
                "no takeover",
                f"{host} did not log 'Running as primary controller' within {TAKEOVER_WAIT_SECONDS} s",
            )
        else:
            if self.fault_at is not None:
                self.takeover_seconds = seen - self.fault_at
            self.note(
                f"{host} took over",
                f"logged 'Running as primary controller' {seen - (self.fault_at or seen):.1f} s "
                "after the fault",
                at=seen,
            )
        self.notify(on_message(self.address(host)))
