"""Time to verdict in the real Slurm lab: SIGKILL of the primary slurmctld -> FAILED_OVER.

The controllers are probed the way the health check does it (the real probe, through the
lab's command runner) and the reports weighed by the real verdict rules, again and again
from the moment of the kill until the verdict is FAILED_OVER. The figure is the earliest a
verification can say "failed over", next to SlurmctldTimeout (the backup takes over only
after it); the deployed workflow starts checking SettleSeconds after its trigger.

Runs only where the lab can: root, network namespaces, Slurm and MariaDB present, the
``hyperpod_lab`` package importable with its ``Lab``, no lab already up and nobody else
holding the lab's lock. It always brings the lab down again.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import os
import re
import secrets
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import util as importlib_util
from pathlib import Path
from typing import Any, Final

from bench.stats import at_most, median
from hyperpod_ha.health import NON_INTERACTIVE_DOCUMENT, ControllerNode, check_controller
from hyperpod_ha.verdict import evaluate

RUNS: Final = 3
MARGIN_SECONDS: Final = 20
POLL_SECONDS: Final = 0.5
PROBE_DEADLINE_SECONDS: Final = 30.0
STEADY_TIMEOUT_SECONDS: Final = 60.0
LOCK: Final = Path(tempfile.gettempdir()) / "hyperpod-lab.lock"
LOCK_WAIT_SECONDS: Final = 60.0
_LAB_API: Final = ("up", "down", "is_up", "controllers", "kill_slurmctld", "start_slurmctld")


def unavailable() -> str | None:
    """Why the lab cannot run here, or None."""
    if os.geteuid() != 0:
        return "the Slurm lab needs root"
    return _lab_api_missing() or _namespaces_missing() or _services_missing()


def _lab_api_missing() -> str | None:
    if importlib_util.find_spec("hyperpod_lab") is None:
        return "hyperpod_lab is not importable"
    try:
        lab_module = importlib.import_module("hyperpod_lab")
    except Exception as error:
        return f"hyperpod_lab does not import: {type(error).__name__}"
    lab_class = getattr(lab_module, "Lab", None)
    if lab_class is None:
        return "hyperpod_lab has no Lab class"
    lacking = [name for name in _LAB_API if not hasattr(lab_class, name)]
    return f"hyperpod_lab.Lab lacks {', '.join(lacking)}" if lacking else None


def _namespaces_missing() -> str | None:
    try:
        probe = subprocess.run(
            ["unshare", "--net", "--uts", "--mount", "true"], capture_output=True, check=False
        )
    except FileNotFoundError:
        return "unshare (util-linux) is missing"
    if probe.returncode != 0:
        return "network, UTS and mount namespaces are not available (unshare failed)"
    return None


def _services_missing() -> str | None:
    """Slurm installed and MariaDB answering (installing packages is make lab-up's job, not a bench's)."""
    lab_packages = importlib.import_module("hyperpod_lab.packages")
    missing = lab_packages.missing_packages()
    if missing:
        return f"Slurm packages missing: {', '.join(missing)} (make lab-up installs them)"
    accounting_db = importlib.import_module("hyperpod_lab.accounting_db")
    try:
        accounting_db.AdminConnection().connect().close()
    except Exception as error:
        return f"MariaDB is not reachable: {getattr(error, 'reason', type(error).__name__)}"
    return None


@contextlib.contextmanager
def lab_lock(wait_seconds: float = LOCK_WAIT_SECONDS) -> Iterator[bool]:
    """The lock the lab's tests take, waited for a little; False when someone else keeps it."""
    deadline = time.monotonic() + wait_seconds
    with LOCK.open("w") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(2)
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def slurmctld_timeout(lab: Any) -> int:
    """SlurmctldTimeout as the lab's Slurm reports it (its topology constant as a fallback)."""
    shown = lab.client(["scontrol", "show", "config"])
    match = re.search(r"^SlurmctldTimeout\s*=\s*(\d+)", shown.stdout, re.MULTILINE)
    if match:
        return int(match.group(1))
    return int(importlib.import_module("hyperpod_lab.topology").SLURMCTLD_TIMEOUT_SECONDS)


class Verifier:
    """The health check and verdict, as the workflow runs them, against the lab's controllers."""

    def __init__(self, lab: Any) -> None:
        # The lab's runner executes the probe on a lab host as the SSM agent would.
        self._runner = importlib.import_module("hyperpod_lab.runner").LabRunner(lab)
        self.nodes = [ControllerNode.from_json(controller) for controller in lab.controllers()]

    def verdict(self) -> tuple[str, str]:
        """The verdict's name and its first reason."""
        reports = [
            check_controller(
                node, self._runner, document=NON_INTERACTIVE_DOCUMENT, deadline_seconds=PROBE_DEADLINE_SECONDS
            )
            for node in self.nodes
        ]
        verdict = evaluate(reports)
        return verdict.name.value, verdict.reasons[0] if verdict.reasons else ""

    def wait_for(
        self, wanted: str, since: float, timeout: float
    ) -> tuple[float | None, list[dict[str, Any]]]:
        """Seconds from ``since`` until the verdict is ``wanted`` (None if never), and each change."""
        timeline: list[dict[str, Any]] = []
        while time.monotonic() - since < timeout:
            name, reason = self.verdict()
            at = round(time.monotonic() - since, 2)
            if not timeline or timeline[-1]["verdict"] != name:
                timeline.append({"at": at, "verdict": name, "reason": reason})
            if name == wanted:
                return at, timeline
            time.sleep(POLL_SECONDS)
        return None, timeline


@dataclass(frozen=True)
class FailoverRun:
    seconds: float | None  # None: no FAILED_OVER in time
    slurmctld_timeout: int
    up_seconds: float
    timeline: list[dict[str, Any]]


def failover_once(lab: Any, password: str) -> FailoverRun:
    """A fresh lab, HEALTHY, SIGKILL of the primary's slurmctld, probed until FAILED_OVER; then down.

    Each run gets its own lab: starting the old primary again while the backup is still taking
    over can leave both fighting for minutes, which would spoil the next run.
    """
    try:
        up = lab.up(password, install_packages=False)
        verifier = Verifier(lab)
        primary = verifier.nodes[0].hostname or "ctl1"
        timeout = slurmctld_timeout(lab)
        steady, timeline = verifier.wait_for("HEALTHY", time.monotonic(), STEADY_TIMEOUT_SECONDS)
        if steady is None:
            return FailoverRun(None, timeout, up.seconds, [{"before the kill": timeline}])
        killed = time.monotonic()
        lab.kill_slurmctld(primary)
        took, timeline = verifier.wait_for("FAILED_OVER", killed, timeout + 3 * MARGIN_SECONDS)
        return FailoverRun(took, timeout, up.seconds, timeline)
    finally:
        lab.down()


def report(runs: list[FailoverRun]) -> dict[str, Any]:
    timeout = runs[0].slurmctld_timeout
    timelines = [run.timeline for run in runs]
    failed = [index for index, run in enumerate(runs) if run.seconds is None]
    if failed:
        return {
            "error": f"run(s) {failed} reached no FAILED_OVER verdict in time",
            "slurmctld_timeout": timeout,
            "timelines": timelines,
        }
    seconds = [run.seconds for run in runs if run.seconds is not None]
    measured = round(median(seconds), 1)
    target = timeout + MARGIN_SECONDS
    note = (
        ""
        if measured <= target
        else "the verdict lags the takeover: see the timelines for the verdicts before FAILED_OVER "
        "and how long each probe round took"
    )
    return at_most(
        measured,
        target,
        note,
        unit="seconds from SIGKILL to FAILED_OVER (median)",
        slurmctld_timeout=timeout,
        runs=[round(value, 1) for value in seconds],
        first_verdict_seconds=round(median([run.timeline[0]["at"] for run in runs if run.timeline]), 1),
        lab_up_seconds=[round(run.up_seconds, 1) for run in runs],
        timelines=timelines,
        context=(
            "Verdicts polled continuously from the kill (a probe round on both controllers, then the "
            "verdict, every 0.5 s); first_verdict_seconds is when the first round started at the kill "
            "came back (it waits on the killed controller's client commands). The deployed workflow "
            "first checks SettleSeconds after its trigger (template default 150 = SlurmctldTimeout "
            "120 + margin)."
        ),
    )


def measure(runs: int = RUNS) -> dict[str, Any]:
    reason = unavailable()
    if reason is not None:
        return {"skipped": reason}
    lab_module = importlib.import_module("hyperpod_lab")
    with lab_lock() as locked:
        if not locked:
            return {"skipped": f"the lab is in use (its lock stayed held for {LOCK_WAIT_SECONDS:.0f} s)"}
        lab = lab_module.Lab(lab_module.Topology(controllers=2, nodes=2))
        if lab.is_up():
            return {"skipped": "a lab is already up: the bench leaves someone else's lab alone"}
        password = secrets.token_urlsafe(18)
        return report([failover_once(lab, password) for _ in range(runs)])
