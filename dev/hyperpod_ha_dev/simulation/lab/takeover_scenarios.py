"""Lab scenarios of takeovers beyond one backup: three controllers, and Slurm 24.11's refusal.

* ``failover-3``: three controllers, the primary killed: the first backup takes over, the
  second stays in standby.
* ``second-failover``: after that, the first backup killed too: the second takes over and
  serves, with no standby left (FAILED_OVER, redundancy none).
* ``back-3``: after both, the primary started again: it takes control back from the second
  backup; the first backup is still down (HEALTHY, redundancy reduced; or DEGRADED as
  slurmdbd's registration says, as in ``back``).
* ``standby-killed``, ``standby-killed-3``: a standby's slurmctld killed, nothing published
  (an operator's run): HEALTHY, redundancy none on two controllers, reduced on three.
* ``standby-refuses`` (24.11): the standby cannot read the heartbeat (StateSaveLocation
  hidden from it), then the primary is killed: the standby refuses to take over and says why;
  the verdict is DOWN with its reason.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Final

from hyperpod_ha.slurm import SlurmOutputError, classify_refusal_line, parse_ping, parse_role_log
from hyperpod_ha.verdict.redundancy import NO_STANDBY
from hyperpod_ha_dev.simulation.engine import ScenarioResult
from hyperpod_ha_dev.simulation.lab.errors import LabScenarioError
from hyperpod_ha_dev.simulation.lab.injections import registration_agrees
from hyperpod_ha_dev.simulation.lab.polling import poll
from hyperpod_ha_dev.simulation.lab.probes import last_role
from hyperpod_ha_dev.simulation.lab.progress import (
    TAKE_BACK_SECONDS,
    TAKEOVER_WAIT_SECONDS,
    Drill,
    off_message,
    on_message,
)
from hyperpod_ha_dev.simulation.lab.result import final_verdict_detail
from hyperpod_ha_dev.simulation.lab.scenario import PERSISTENT_FAULT_PARAMETERS, LabScenario
from hyperpod_lab import Lab

REFUSAL: Final = "Not taking control"


def _refusals(log: str) -> set[str]:
    """The kinds of refusal slurmctld itself logged (a user's text in its log is not one)."""
    return {kind for line in log.split("\n") if (kind := classify_refusal_line(line)) is not None}


def _serving(lab: Lab, host: str, offset: int, down: list[str]) -> bool | None:
    """``host`` logged taking control after ``offset`` and answers ping while ``down`` do not."""
    if last_role(lab, host, offset) != "primary":
        return None
    try:
        ping = parse_ping(lab.exec(host, ["scontrol", "ping"], timeout=10).stdout)
    except (SlurmOutputError, subprocess.TimeoutExpired):
        return None
    states = {line.host: line.responding for line in ping}
    return True if states.get(host) and all(states.get(name) is False for name in down) else None


def _kill_and_wait(lab: Lab, victim: str, heir: str, down: list[str]) -> None:
    offset = len(lab.log(heir))
    lab.kill_slurmctld(victim)
    if poll(lambda: _serving(lab, heir, offset, down), TAKEOVER_WAIT_SECONDS) is None:
        raise LabScenarioError(f"{heir} did not take over from {victim} within {TAKEOVER_WAIT_SECONDS} s")


def _first_failover(lab: Lab) -> str:
    _kill_and_wait(lab, "ctl1", "ctl2", ["ctl1"])
    return "ctl1's slurmctld killed; ctl2 took over and serves"


def _both_backups_used(lab: Lab) -> str:
    _first_failover(lab)
    _kill_and_wait(lab, "ctl2", "ctl3", ["ctl1", "ctl2"])
    return "ctl1's slurmctld killed, ctl2 took over; ctl2's killed too, ctl3 took over and serves"


def _redundancy_is(drill: Drill, result: ScenarioResult, level: str) -> None:
    drill.check(
        f"the verdict's redundancy is {level}",
        result.redundancy == level,
        f"{result.redundancy}, ready standbys {list(result.standbys) or 'none'}",
    )


def _kill_first(drill: Drill) -> None:
    offset = drill.log_offset("ctl2")
    drill.offsets["ctl3"] = drill.log_offset("ctl3")
    drill.inject("SIGKILL slurmctld on ctl1 (the primary)", lambda: drill.lab.kill_slurmctld("ctl1"))
    drill.notify_after_takeover("ctl2", offset)


def _third_stays_standby(drill: Drill, result: ScenarioResult) -> None:
    roles = [line.event for line in parse_role_log(drill.lab.log("ctl3")[drill.offsets["ctl3"] :]).lines]
    drill.check(
        "ctl3 stays in standby", not {"primary", "taking_over"} & set(roles), f"logged {roles or 'nothing'}"
    )
    _redundancy_is(drill, result, "reduced")


def _kill_second(drill: Drill) -> None:
    offset = drill.log_offset("ctl3")
    drill.inject(
        "SIGKILL slurmctld on ctl2 (the active first backup)", lambda: drill.lab.kill_slurmctld("ctl2")
    )
    drill.notify_after_takeover("ctl3", offset)


def _ctl3_active(drill: Drill, result: ScenarioResult) -> None:
    verdict = final_verdict_detail(result)
    drill.check(
        "ctl3 (SlurmctldHost[2]) is the active controller", "ctl3 is active" in verdict, verdict[:200]
    )
    drill.check("the verdict names the missing standby", "standby ctl2: slurmctld not running" in verdict)
    drill.check("the verdict says no standby is ready", NO_STANDBY in verdict, verdict[:240])
    _redundancy_is(drill, result, "none")


def _start_first(drill: Drill) -> None:
    lab = drill.lab
    offsets = {name: drill.log_offset(name) for name in ("ctl1", "ctl3")}
    drill.offsets.update(offsets)
    drill.inject("slurmctld on ctl1 started again", lambda: lab.start_slurmctld("ctl1", wait=False))
    if drill.wait_for_role("ctl1", offsets["ctl1"], "primary", TAKE_BACK_SECONDS) is not None:
        drill.note("ctl1 took control back", "logged 'Running as primary controller'")
    drill.notify(on_message(drill.address("ctl1")))
    if drill.wait_for_role("ctl3", offsets["ctl3"], "standby", 20) is not None:
        drill.notify(off_message(drill.address("ctl3"), "Backup"))


def _control_back(drill: Drill, result: ScenarioResult) -> None:
    verdict = final_verdict_detail(result)
    drill.check("ctl1 is active again", "ctl1 is active" in verdict, verdict[:200])
    drill.check("ctl3 went back to standby", last_role(drill.lab, "ctl3", drill.offsets["ctl3"]) == "standby")
    # Redundancy reduced: ctl3 is ready, ctl2 is not; never none.
    drill.check("the verdict names the missing standby", "standby ctl2: slurmctld not running" in verdict)
    drill.check("a standby is still ready", NO_STANDBY not in verdict, verdict[:240])
    _redundancy_is(drill, result, "reduced")
    registration_agrees(drill, result)


def _kill_standby(host: str) -> Callable[[Drill], None]:
    def inject(drill: Drill) -> None:
        drill.inject(
            f"SIGKILL slurmctld on {host} (a standby); nothing is published for it",
            lambda: drill.lab.kill_slurmctld(host),
        )
        drill.operator_run(f"{host}'s slurmctld was killed")

    return inject


def _standby_gone(host: str, none_left: bool) -> Callable[[Drill, ScenarioResult], None]:
    def verify(drill: Drill, result: ScenarioResult) -> None:
        verdict = final_verdict_detail(result)
        drill.check("ctl1 is still active", "ctl1 (configured primary) is active" in verdict, verdict[:200])
        drill.check(f"the verdict names {host}", f"standby {host}: slurmctld not running" in verdict)
        said = NO_STANDBY in verdict
        drill.check(
            "the verdict says no standby is ready" if none_left else "a standby is still ready",
            said is none_left,
            verdict[:240],
        )
        _redundancy_is(drill, result, "none" if none_left else "reduced")

    return verify


def _refused_takeover(drill: Drill) -> None:
    lab = drill.lab
    offset = drill.log_offset("ctl2")
    drill.offsets["ctl2"] = offset

    def fault() -> None:
        lab.hide_heartbeat("ctl2")
        lab.kill_slurmctld("ctl1")

    drill.inject(
        "ctl2 cannot read the heartbeat (StateSaveLocation hidden), then SIGKILL of ctl1's slurmctld", fault
    )
    seen = poll(lambda: time.time() if _refusals(lab.log("ctl2")[offset:]) else None, TAKEOVER_WAIT_SECONDS)
    if seen is None:
        drill.note("no refusal", f"ctl2 logged no '{REFUSAL}' within {TAKEOVER_WAIT_SECONDS} s")
    else:
        drill.note(
            "ctl2 refuses to take over",
            f"logged '{REFUSAL}' {seen - (drill.fault_at or seen):.1f} s after the fault",
            at=seen,
        )
    drill.operator_run("ctl1 does not answer")


def _refusal_in_verdict(drill: Drill, result: ScenarioResult) -> None:
    log = drill.lab.log("ctl2")[drill.offsets["ctl2"] :]
    drill.check(
        "ctl2 logged that the heartbeat file could not be read",
        "heartbeat_unreadable" in _refusals(log),
    )
    roles = {line.event for line in parse_role_log(log).lines}
    drill.check(
        "ctl2 did not take over",
        not roles & {"taking_over", "primary"},
        f"role lines: {sorted(roles) or 'none'}",
    )
    verdict = final_verdict_detail(result)
    drill.check(
        "the verdict says why ctl2 does not take over",
        "ctl2 refuses to take over" in verdict and "heartbeat file could not be read" in verdict,
        verdict[:240],
    )


TAKEOVER_SCENARIOS: Final = (
    LabScenario(
        "failover-3",
        "three controllers: SIGKILL of ctl1's slurmctld; ctl2 takes over, ctl3 stays standby",
        _kill_first,
        frozenset({"FAILED_OVER"}),
        "FAILED_OVER",
        verify=_third_stays_standby,
        measured=True,
        controllers=3,
    ),
    LabScenario(
        "second-failover",
        "three controllers, after a failover to ctl2: SIGKILL of ctl2's slurmctld too; ctl3 takes over",
        _kill_second,
        frozenset({"FAILED_OVER"}),
        "FAILED_OVER (redundancy none)",
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
        precondition=_first_failover,
        verify=_ctl3_active,
        measured=True,
        controllers=3,
        why=(
            "ctl3 takes over and serves: the failover worked (FAILED_OVER, verified, no run incident). "
            "ctl1 and ctl2 are both down, so no standby is left: the verdict says 'no standby is ready: "
            "one more failure stops the cluster' and its redundancy is none (the watchdog's "
            "redundancy-lost incident follows after RedundancyGraceMinutes)"
        ),
    ),
    LabScenario(
        "back-3",
        "three controllers, ctl1 and ctl2 killed, ctl3 active: ctl1 started again takes control back",
        _start_first,
        frozenset({"HEALTHY", "DEGRADED"}),
        "HEALTHY (redundancy reduced) or DEGRADED, as slurmdbd's registration says",
        precondition=_both_backups_used,
        verify=_control_back,
        controllers=3,
        why=(
            "ctl1 takes control back from ctl3, which returns to standby; ctl2's slurmctld is still "
            "down: redundancy reduced (ctl3 ready, ctl2 not), no DEGRADED for it. As in `back` on 24.11, "
            "slurmdbd's registration may be blank after the hand-back: then DEGRADED naming it"
        ),
    ),
    LabScenario(
        "standby-killed",
        "SIGKILL of ctl2's slurmctld (the standby); nothing published, an operator's run",
        _kill_standby("ctl2"),
        frozenset({"HEALTHY"}),
        "HEALTHY (redundancy none)",
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
        verify=_standby_gone("ctl2", none_left=True),
        measured=True,
        why=(
            "ctl1 still serves: HEALTHY. ctl2 was the only standby, so redundancy is none and the verdict "
            "says 'no standby is ready: one more failure stops the cluster' (the watchdog's "
            "redundancy-lost incident follows after RedundancyGraceMinutes)"
        ),
    ),
    LabScenario(
        "standby-killed-3",
        "three controllers: SIGKILL of ctl3's slurmctld (a standby); an operator's run",
        _kill_standby("ctl3"),
        frozenset({"HEALTHY"}),
        "HEALTHY (redundancy reduced)",
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
        verify=_standby_gone("ctl3", none_left=False),
        measured=True,
        controllers=3,
        why="ctl1 still serves and ctl2 is still a ready standby: HEALTHY, redundancy reduced",
    ),
    LabScenario(
        "standby-refuses",
        "ctl2 cannot read the heartbeat, then ctl1's slurmctld is killed: ctl2 refuses to take over",
        _refused_takeover,
        frozenset({"DOWN"}),
        "DOWN",
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
        verify=_refusal_in_verdict,
        min_slurm="24.11",
        why=(
            "Slurm 24.11's standby takes over only when it can read the heartbeat file; it cannot, so it "
            "logs 'Not taking control. ... heartbeat file could not be read' and nobody is active: DOWN, "
            "with the standby's own reason in the verdict"
        ),
    ),
)
