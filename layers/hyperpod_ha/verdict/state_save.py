"""StateSaveLocation and the heartbeat file in it: what a backup needs to take over."""

from __future__ import annotations

from hyperpod_ha.human_time import ago
from hyperpod_ha.verdict.observation import Findings, Observation, ObservedController
from hyperpod_ha.verdict.reasons import ReasonCode


def state_save_findings(seen: Observation) -> Findings:
    found = Findings()
    fstypes: dict[str, list[str]] = {}
    expected = seen.policy.expected_state_fstypes
    for report in seen.checked:
        state = report.state_save
        who = seen.label(report)
        if state.error:
            found.problem(ReasonCode.STATE_SAVE_ERROR, f"{who}: {state.error}")
        elif state.exists is False:
            found.problem(
                ReasonCode.STATE_SAVE_MISSING, f"{who}: StateSaveLocation {state.path} does not exist"
            )
        elif state.effectively_writable is False:
            cause = f" ({state.write_error})" if state.write_error else ""
            found.problem(
                ReasonCode.STATE_SAVE_NOT_WRITABLE,
                f"{who}: StateSaveLocation {state.path} is not writable{cause}",
            )
        if state.fstype:
            fstypes.setdefault(state.fstype, []).append(who)
            if expected and state.fstype not in expected:
                found.problem(
                    ReasonCode.STATE_SAVE_FILESYSTEM,
                    f"{who}: StateSaveLocation is on {state.fstype}, expected {', '.join(sorted(expected))}",
                )
    if len(fstypes) > 1:
        kinds = "; ".join(f"{kind} on {', '.join(who)}" for kind, who in sorted(fstypes.items()))
        found.problem(
            ReasonCode.STATE_SAVE_FILESYSTEMS_DIFFER,
            f"controllers see StateSaveLocation on different file systems: {kinds}",
        )
    return found


def heartbeat_findings(seen: Observation, active: ObservedController) -> Findings:
    found = Findings()
    for report in seen.checked:
        if report.heartbeat.readable is False:
            found.problem(
                ReasonCode.HEARTBEAT_UNREADABLE,
                f"{seen.label(report)}: {report.heartbeat.error or 'heartbeat unreadable'}: "
                "this controller could not take over",
            )
    if active.checked is None:
        return found
    beat = seen.fresh_beat
    if beat is None:
        if seen.last_beat is not None:
            found.problem(
                ReasonCode.HEARTBEAT_NOT_WRITTEN,
                "the active controller does not write the heartbeat: "
                f"last beat {ago(seen.last_beat.age)} by {seen.name(seen.last_beat.writer)}",
            )
    elif beat.writer != active.index:
        found.problem(
            ReasonCode.HEARTBEAT_WRITTEN_BY_OTHER,
            f"heartbeat last written {ago(beat.age)} by {seen.name(beat.writer)}, "
            f"not by the active {active.key}",
        )
    return found
