"""Where Slurm's own answer (``/readyz``, 25.11+) and the older signals disagree: named as notes.

``/readyz`` decides who is in control (:mod:`.activity`); a log line or the heartbeat's writer
saying otherwise is told, not weighed: a log line can be someone's text, and the heartbeat lags
a takeover by up to one beat."""

from __future__ import annotations

from hyperpod_ha.human_time import ago
from hyperpod_ha.slurm import READY
from hyperpod_ha.verdict.observation import Observation
from hyperpod_ha.verdict.phrases import role_phrase


def readiness_notes(seen: Observation) -> list[str]:
    notes: list[str] = []
    beat = seen.fresh_beat
    for controller in seen.everyone:
        report = controller.checked
        if report is None or (status := report.http.readyz) is None:
            continue
        if status == READY and report.role.logged in ("standby", "stopping"):
            notes.append(f"{controller.key}'s /readyz answers 204 (in control) but it {role_phrase(report)}")
        elif status != READY and report.role.logged == "primary":
            notes.append(
                f"{controller.key} {role_phrase(report)} but its /readyz answers {status}: not in control"
            )
        if (
            status == READY
            and beat is not None
            and controller.index is not None
            and beat.writer != controller.index
        ):
            notes.append(
                f"{controller.key}'s /readyz answers 204 (in control) but the heartbeat was last written "
                f"by {seen.name(beat.writer)} ({ago(beat.age)})"
            )
    return notes
