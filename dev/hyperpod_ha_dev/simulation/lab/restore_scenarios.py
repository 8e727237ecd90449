"""Lab scenarios of restoring redundancy, with the stack as deployed (the template's defaults but
for ``RestoreRedundancy`` and, where the watchdog's incident is looked at, a shortened
``RedundancyGraceMinutes``).

* ``standby-restored``: ctl2's slurmctld killed, nothing published: the watchdog's tick finds it
  (HEALTHY, redundancy none; a grace of 0 opens ``redundancy-lost`` at once), a run with
  ``standbys`` starts the restore, which starts slurmctld on ctl2; the restore's verification is
  HEALTHY with redundancy full, and the next tick resolves the incident.
* ``standby-hung-restored``: the same with ctl2's slurmctld stopped (SIGSTOP): it is restarted.
* ``redundancy-lost``: ctl1 killed, ``off``: FAILED_OVER, redundancy none; a tick within the
  grace (1 minute) opens nothing, the first tick after it opens ``redundancy-lost``, naming
  the active controller and the command that would restore the old primary.
* ``primary-restored``: ctl1 killed, ``all``: FAILED_OVER, then the restore starts ctl1's
  slurmctld, which takes control back; the restore's verification is HEALTHY.
* ``isolated-no-restore``: ctl1 cut off, ``all``: DOWN; the run starts no restore and its
  incident says why the cluster is down; a restore started by hand refuses for the verdict.
* ``crash-loop``: ctl2's slurmctld exits at every start, ``standbys``: two restore attempts,
  each not restored, then the third restore stops at RestoreMaxPerHour and says so, in its
  notice and on the open ``redundancy-lost`` incident.

When a watchdog tick starts the run itself (a verified verdict with a controller to restore),
no operator's run is needed; otherwise the operator's run stands in for it (:mod:`.restore_steps`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, Final

import boto3

from hyperpod_ha.verdict.redundancy import NO_STANDBY
from hyperpod_ha_dev.simulation.engine import ScenarioResult
from hyperpod_ha_dev.simulation.lab.injections import isolate_primary, kill_primary
from hyperpod_ha_dev.simulation.lab.probes import last_role
from hyperpod_ha_dev.simulation.lab.progress import Drill
from hyperpod_ha_dev.simulation.lab.restore_steps import (
    incidents,
    last_restore,
    notices,
    restore_by_hand,
    settle,
    tick,
    tick_then_run,
)
from hyperpod_ha_dev.simulation.lab.result import final_verdict_detail
from hyperpod_ha_dev.simulation.lab.scenario import LabScenario
from hyperpod_ha_dev.simulation.ticker import FOUND
from hyperpod_lab.crash_loop import FATAL
from hyperpod_lab.faults import check

LOST: Final = "redundancy-lost"
GRACE_MINUTES: Final = 1
STOPPED: Final = (
    "restoring stopped: 2 restore actions on this cluster this hour already (RestoreMaxPerHour=2)"
)


def _standby_fault(fault: str) -> Callable[[Drill], None]:
    """``fault`` on ctl2 (nothing published), found by the watchdog, restored, ticked again."""

    def inject(drill: Drill) -> None:
        found = check(drill.lab, fault, drill.backup)
        did: list[object] = []
        drill.inject(
            f"{fault} on {drill.backup} ({found.summary}); nothing is published",
            lambda: did.append(found.apply(drill.lab, drill.backup)),
        )
        if isinstance(did[0], str):
            drill.details["fault_did"] = did[0]
            drill.note("  the fault did", did[0])
        tick_then_run(drill, f"the watchdog found {drill.backup} not ready")
        settle(drill)
        tick(drill, "after the restore")

    return inject


def _redundancy(drill: Drill, result: ScenarioResult, level: str) -> None:
    drill.check(
        f"the final verdict's redundancy is {level}",
        result.redundancy == level,
        f"{result.redundancy}, ready standbys {list(result.standbys) or 'none'}",
    )


def _one_action(drill: Drill, host: str, kind: str, restored: bool) -> None:
    actions = drill.details.get("restore_actions", [])
    drill.check(
        f"one restore action: {kind} on {host}, restored={restored}",
        [(a.get("controller"), a.get("kind"), a.get("restored")) for a in actions]
        == [(host, kind, restored)],
        str(actions)[:400],
    )


def _handed_over(drill: Drill) -> None:
    """The run that found the restore to do handed it its lease before its snapshot (issue 36)."""
    sfn = boto3.client("stepfunctions")
    handed = [
        (
            json.loads(sfn.describe_execution(executionArn=e["executionArn"]).get("output") or "{}").get(
                "lease"
            )
            or {}
        )
        .get("value", {})
        .get("handed_from")
        for e in drill.run.stack.executions("RedundancyRestoreStateMachineArn")
    ]
    drill.check("the run handed its lease to the restore before its snapshot", any(handed), str(handed))


def _ticks(drill: Drill) -> list[dict[str, Any]]:
    return list(drill.details.get("ticks", []))


def _lost_incident(drill: Drill, status: str, *words: str) -> None:
    items = incidents()
    drill.details["incidents_seen"] = [{k: i[k] for k in ("kind", "status", "title")} for i in items]
    lost = [i for i in items if i["kind"] == LOST]
    drill.check(
        f"one {LOST} incident, {status}",
        [i["status"] for i in lost] == [status] and len(items) == 1,
        str(drill.details["incidents_seen"]),
    )
    text = lost[0]["description"] if lost else ""
    for word in words:
        drill.check(f"the incident says {word!r}", word in text, text[:300])


def _standby_restored(why: str) -> Callable[[Drill, ScenarioResult], None]:
    def verify(drill: Drill, result: ScenarioResult) -> None:
        host = drill.backup
        first, after = [*_ticks(drill), {}, {}][:2]
        drill.check(
            f"the watchdog's tick found {host} not ready (redundancy none) and opened {LOST}",
            (first.get("verdict"), first.get("redundancy"), first.get("redundancy_step"))
            == ("HEALTHY", "none", "open")
            and host in first.get("not_ready", {}),
            str(first),
        )
        drill.check(
            "the watchdog's tick started the run (a restore would act)",
            first.get("outcome") in FOUND,
            str(first.get("outcome")),
        )
        _one_action(drill, host, "start-slurmctld", restored=True)
        _handed_over(drill)
        drill.check(
            f"the restore said why: {why}",
            why in str(drill.details.get("restore_actions")) or why in str(last_restore(drill.run.stack)),
        )
        _redundancy(drill, result, "full")
        drill.check(f"{host} logged the standby role again", last_role(drill.lab, host) == "standby")
        drill.check(
            f"the next tick sees {host} ready and resolves {LOST}",
            (after.get("redundancy"), after.get("redundancy_step")) == ("full", "resolve"),
            str(after),
        )
        _lost_incident(drill, "Resolved", host)
        if first.get("seconds_after_fault") is not None:
            drill.details["watchdog_detect_seconds"] = round(
                first["seconds_after_fault"] + first["took_seconds"], 1
            )

    return verify


def _lost_after_grace(drill: Drill) -> None:
    kill_primary(drill)
    settle(drill)
    first = tick(drill, "within the grace")
    drill.details["incidents_within_grace"] = len(incidents())
    wait = GRACE_MINUTES * 60 - (first.get("took_seconds") or 0)
    time.sleep(max(wait, 0.0) + 2)  # the grace passes
    tick(drill, "after the grace")


def _lost_named(drill: Drill, result: ScenarioResult) -> None:
    within, after = [*_ticks(drill), {}, {}][:2]
    verdict = final_verdict_detail(result)
    drill.check("the verdict says no standby is ready", NO_STANDBY in verdict, verdict[:240])
    _redundancy(drill, result, "none")
    drill.check(
        "within the grace the tick opens nothing",
        within.get("redundancy_step") in ("start", "wait") and drill.details["incidents_within_grace"] == 0,
        str(within),
    )
    drill.check(f"after the grace the tick opens {LOST}", after.get("redundancy_step") == "open", str(after))
    _lost_incident(
        drill,
        "Open",
        "no standby has been ready",
        f"{drill.backup} is active",
        "sudo systemctl start slurmctld",
    )
    drill.check(
        "RestoreRedundancy off: no restore ran",
        not drill.run.stack.executions("RedundancyRestoreStateMachineArn"),
    )


def _primary_killed_then_restored(drill: Drill) -> None:
    kill_primary(drill)
    settle(drill)


def _control_handed_back(drill: Drill, result: ScenarioResult) -> None:
    _one_action(drill, drill.primary, "hand-back", restored=True)
    _handed_over(drill)
    verdict = final_verdict_detail(result)
    drill.check(
        f"{drill.primary} is active again",
        f"{drill.primary} (configured primary) is active" in verdict,
        verdict[:200],
    )
    drill.check(f"{drill.backup} went back to standby", last_role(drill.lab, drill.backup) == "standby")
    _redundancy(drill, result, "full")


def _isolated_then_by_hand(drill: Drill) -> None:
    isolate_primary(drill)
    settle(drill)
    drill.details["restore_by_hand"] = restore_by_hand(drill, "all")


def _nothing_done_and_said_why(drill: Drill, result: ScenarioResult) -> None:
    stack = drill.run.stack
    by_hand = drill.details.get("restore_by_hand") or {}
    drill.check(
        "the run started no restore (only the one by hand ran)",
        len(stack.executions("RedundancyRestoreStateMachineArn")) == 1,
    )
    blocked = str(by_hand.get("blocked") or "")
    drill.check(
        f"the restore by hand did nothing and says why: the verdict is {result.verdict}",
        not by_hand.get("actions") and f"not restored: the verdict is {result.verdict}" in blocked,
        blocked[:240] or str(by_hand)[:240],
    )
    items = incidents()
    text = items[0]["description"] if len(items) == 1 else ""
    drill.check(
        f"the run's incident says why: {result.verdict} with the verdict's reasons",
        f"Verdict: {result.verdict}" in text and all(reason[:60] in text for reason in result.reasons[:2]),
        text[:300],
    )


def _crash_loop(drill: Drill) -> None:
    _standby_fault("crash-loop")(drill)


def _two_attempts_then_stopped(drill: Drill, result: ScenarioResult) -> None:
    host = drill.backup
    did = str(drill.details.get("fault_did"))
    drill.check(f"{host}'s slurmctld exited at its start with '{FATAL}'", f"logged '{FATAL}'" in did, did)
    actions = drill.details.get("restore_actions", [])
    drill.check(
        f"two restore attempts on {host}, neither restored",
        [(a.get("controller"), a.get("restored")) for a in actions] == [(host, False)] * 2,
        str(actions)[:400],
    )
    restores = drill.run.stack.executions("RedundancyRestoreStateMachineArn")
    record = last_restore(drill.run.stack) or {}
    drill.check(
        "a third restore took no action and stopped at the hourly bound",
        len(restores) == 3 and not record.get("actions") and STOPPED in str(record.get("stopped")),
        str(record)[:300],
    )
    said = [n for n in notices(drill.run.stack) if n["kind"] == "restore-action" and STOPPED in n["body"]]
    drill.check("its notice says restoring stopped and why", len(said) == 1, f"{len(said)} notice(s)")
    open_lost = [i for i in incidents() if i["kind"] == LOST and i["status"] == "Open"]
    noted = open_lost[0]["restore_notes"] if open_lost else ""
    drill.check(
        f"the open {LOST} incident has both attempts and that restoring stopped, and why",
        noted.count(f"{host}: start-slurmctld: NOT restored") == 2 and STOPPED in noted,
        noted[-400:],
    )
    _redundancy(drill, result, "none")
    drill.check(f"{host}'s slurmctld does not run", drill.lab.pid(host, "slurmctld") is None)
    _lost_incident(drill, "Open", host, FATAL)


RESTORE_SCENARIOS: Final = (
    LabScenario(
        "standby-restored",
        "SIGKILL of ctl2's slurmctld (the standby), nothing published; the watchdog finds it, "
        "RestoreRedundancy=standbys starts it again",
        _standby_fault("kill"),
        frozenset({"HEALTHY"}),
        "HEALTHY (redundancy full again)",
        parameters={"RestoreRedundancy": "standbys", "RedundancyGraceMinutes": 0},
        verify=_standby_restored("slurmctld not running"),
        measured=True,
        defaults=True,
        runs=2,
        incidents=1,
        why=(
            "ctl1 serves throughout (HEALTHY); the watchdog's tick sees no ready standby (redundancy none; "
            "a grace of 0 opens redundancy-lost at once), the run's restore starts slurmctld on ctl2, which "
            "logs the standby role and answers ping: the restore's verification is HEALTHY with redundancy "
            "full, and the next tick resolves the incident"
        ),
    ),
    LabScenario(
        "standby-hung-restored",
        "SIGSTOP of ctl2's slurmctld (the standby hangs); the watchdog finds it, RestoreRedundancy=standbys "
        "restarts it",
        _standby_fault("stop"),
        frozenset({"HEALTHY"}),
        "HEALTHY (redundancy full again)",
        parameters={"RestoreRedundancy": "standbys", "RedundancyGraceMinutes": 0},
        verify=_standby_restored("slurmctld stopped (SIGSTOP)"),
        measured=True,
        defaults=True,
        runs=2,
        incidents=1,
    ),
    LabScenario(
        "redundancy-lost",
        "SIGKILL of ctl1's slurmctld, RestoreRedundancy off; the watchdog opens redundancy-lost after "
        "the grace",
        _lost_after_grace,
        frozenset({"FAILED_OVER"}),
        "FAILED_OVER (redundancy none), redundancy-lost after the grace",
        parameters={"RedundancyGraceMinutes": GRACE_MINUTES},
        verify=_lost_named,
        measured=True,
        defaults=True,
        incidents=1,
        why=(
            "ctl2 took over and serves (FAILED_OVER, no run incident), but no standby is left: the watchdog "
            "records the loss at its first tick and opens redundancy-lost once RedundancyGraceMinutes has "
            "passed, naming the active controller and the command that would restore ctl1"
        ),
    ),
    LabScenario(
        "primary-restored",
        "SIGKILL of ctl1's slurmctld; RestoreRedundancy=all starts it again after the failover: "
        "it takes control back",
        _primary_killed_then_restored,
        frozenset({"HEALTHY"}),
        "HEALTHY (control handed back)",
        parameters={"RestoreRedundancy": "all"},
        verify=_control_handed_back,
        measured=True,
        defaults=True,
        runs=2,
        incidents=0,
        why=(
            "the failover run is FAILED_OVER; with all, its restore starts the configured primary's "
            "slurmctld, which asks ctl2 for control back (as the drill's hand-back); the restore checks it "
            "logged the primary role and answers ping, registers it with slurmdbd when slurmdbd names none, "
            "and its verification is HEALTHY with ctl2 a ready standby again"
        ),
    ),
    LabScenario(
        "isolated-no-restore",
        "ctl1 cut off the network, RestoreRedundancy=all: nothing is restored, and it says why",
        _isolated_then_by_hand,
        frozenset({"DOWN"}),
        "DOWN, no restore",
        parameters={"RestoreRedundancy": "all"},
        verify=_nothing_done_and_said_why,
        defaults=True,
        why=(
            "as in isolated-primary, no reachable controller is active: DOWN. The run starts no restore "
            "(never for DOWN, SPLIT_BRAIN or UNKNOWN) and its incident gives the verdict's reasons; a "
            "restore started by hand checks again and refuses: 'not restored: the verdict is DOWN'"
        ),
    ),
    LabScenario(
        "crash-loop",
        "ctl2's slurmctld exits at every start (crash-loop); RestoreRedundancy=standbys tries twice, "
        "then stops",
        _crash_loop,
        frozenset({"HEALTHY"}),
        "HEALTHY (redundancy none), restoring stopped after two attempts",
        parameters={"RestoreRedundancy": "standbys", "RedundancyGraceMinutes": 0},
        verify=_two_attempts_then_stopped,
        defaults=True,
        runs=3,
        incidents=1,
        why=(
            "ctl1 serves (HEALTHY), ctl2 never comes back: each restore starts it, it exits at once "
            f"('{FATAL} ...'), the restore's checks see it not running and say not restored; its "
            "verification finds the same and restores again; the third restore finds RestoreMaxPerHour (2) "
            "used and stops, its notice and the open redundancy-lost incident saying so; redundancy-lost "
            "stays open, naming ctl2's fatal line and carrying each restore's note"
        ),
    ),
)
