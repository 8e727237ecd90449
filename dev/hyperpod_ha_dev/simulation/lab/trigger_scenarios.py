"""Lab scenarios of Slurm's own triggers (issue 37): the stack's triggers installed on the lab's
controllers by its own ``SlurmTriggersDocument`` (through the lab's agent, as at deploy time), the
lab's failover topic relayed to the embedded stack (:mod:`.topic_relay`), and no watchdog tick.

* ``standby-trigger-restored``: SIGKILL of ctl2's slurmctld (the standby). The active ctl1 pings
  its backups every SlurmctldTimeout and fires ``backup_slurmctld_failure``; the triggers' program
  publishes through the node's ``aws``; ControllerStatusFunction starts a run whose trigger is
  Slurm's; the run is HEALTHY with no ready standby and, with ``standbys``, its restore starts
  ctl2's slurmctld; the restore's verification is HEALTHY with redundancy full.

Slurm runs a fired trigger's program at its next trigger pass (every 15 s), and forgets at the end
of each pass the events no trigger took. A trigger set before slurmctld's first pass after its
start so also fires for that start's "resumed" events (seen on 24.11, the triggers installed
seconds after ``lab up``: slurmctld's resumed operation and control, slurmdbd's and the database's
resumed operation, at the next pass). The scenario waits until the outbox has been quiet for a
whole pass after the install: what the install fired is written then, before the relay starts,
so it starts no run here; the scenario records it (``fired_at_install``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, Final

import boto3

from hyperpod_ha.acting.node_commands import parse_script_output
from hyperpod_ha.commands import CommandRequest, runner_for
from hyperpod_ha.human_time import parse_utc
from hyperpod_ha.slurm.strigger_get import parse_strigger_get
from hyperpod_ha.slurm.triggers import SUBJECT, TriggerMessageRejected, parse_trigger_message
from hyperpod_ha.slurm_triggers.node import triggers_parameters, triggers_result
from hyperpod_ha_dev.simulation import node_aws_cli
from hyperpod_ha_dev.simulation.engine import ScenarioResult
from hyperpod_ha_dev.simulation.lab.node_secret import INTERPRETER
from hyperpod_ha_dev.simulation.lab.polling import poll
from hyperpod_ha_dev.simulation.lab.probes import last_role
from hyperpod_ha_dev.simulation.lab.progress import Drill
from hyperpod_ha_dev.simulation.lab.restore_steps import settle
from hyperpod_ha_dev.simulation.lab.scenario import LabScenario
from hyperpod_ha_dev.simulation.lab.topic_relay import FailoverTopicRelay, outbox_entry, slurmctld_path
from hyperpod_ha_dev.simulation.lab.transport import LAB_TRANSPORT
from hyperpod_lab.topology import SLURMCTLD_TIMEOUT_SECONDS

FAILURE: Final = "backup_slurmctld_failure"
INSTALL_DEADLINE_SECONDS: Final = 60.0
# slurmctld runs the programs of fired triggers at its trigger pass, every TRIGGER_INTERVAL (15 s,
# src/slurmctld/slurmctld.h), and forgets the events no trigger took at the end of each pass: once
# the outbox has been quiet for a whole pass after the install, whatever the install fired is
# written, and nothing of before the fault is left to fire.
TRIGGER_PASS_SECONDS: Final = 15
QUIET_SECONDS: Final = TRIGGER_PASS_SECONDS + 2.0
QUIET_AT_MOST_SECONDS: Final = 3 * TRIGGER_PASS_SECONDS
# The active pings its backups every SlurmctldTimeout and one failed ping marks the event; the
# next trigger pass runs the program; then the relay, on a loaded machine.
RUN_START_SECONDS: Final = 2 * SLURMCTLD_TIMEOUT_SECONDS + TRIGGER_PASS_SECONDS + 60.0


def install_triggers(drill: Drill) -> dict[str, Any]:
    """The stack's SlurmTriggersDocument (install, the stack's failover topic) on each
    controller, through the lab's agent; each controller's result."""
    stack = drill.run.stack
    document = str(stack.ref("SlurmTriggersDocument"))
    parameters = triggers_parameters("install", drill.run.site.failover_topic_arn)
    runner = runner_for(LAB_TRANSPORT)
    results = {}
    for controller in drill.lab.controllers():
        answer = runner.run(
            CommandRequest(controller["target"], document, INSTALL_DEADLINE_SECONDS, parameters)
        )
        result = triggers_result(parse_script_output(answer.stdout))
        results[controller["hostname"]] = result
        drill.note(
            "Slurm triggers installed",
            f"{controller['hostname']}: rc {result.rc}, installed {len(result.installed)}, "
            f"already {len(result.already)}, failed {list(result.failed) or 'none'}"
            + (f", error {result.error}" if result.error else ""),
        )
    return results


def clear_triggers(drill: Drill) -> int:
    """Clear the stack's triggers from the lab (the active slurmctld holds them, in
    StateSaveLocation): later scenarios run with SlurmTriggers off, on the lab's baseline. How
    many were cleared."""
    lab, host = drill.lab, drill.primary
    listed = lab.exec(host, ["strigger", "--get"])
    ours = [row.trig_id for row in parse_strigger_get(listed.stdout) if row.is_ours()]
    for trig_id in ours:
        lab.exec(host, ["strigger", "--clear", f"--id={trig_id}"])
    drill.note("Slurm triggers cleared", f"{len(ours)} of the stack's, on {host}")
    return len(ours)


def _events_written(drill: Drill, since: int) -> list[str]:
    """The trigger events in the outbox's lines after byte ``since``."""
    outbox = drill.lab.paths.sns_outbox
    if not outbox.exists():
        return []
    with outbox.open("rb") as handle:
        handle.seek(since)
        lines = handle.read().decode(errors="replace").splitlines()
    events = []
    for line in lines:
        entry = outbox_entry(line)
        try:
            parsed = parse_trigger_message(entry.get("subject"), entry["message"]) if entry else None
        except TriggerMessageRejected:
            parsed = None
        if parsed is not None:
            events.append(parsed.event.name)
    return events


def _outbox_size(drill: Drill) -> int:
    outbox = drill.lab.paths.sns_outbox
    return outbox.stat().st_size if outbox.exists() else 0


def _quiet_outbox(drill: Drill) -> None:
    """Until the outbox has not grown for QUIET_SECONDS (the install's own triggers written)."""
    started = time.monotonic()
    size, changed = _outbox_size(drill), time.monotonic()
    while time.monotonic() - started < QUIET_AT_MOST_SECONDS:
        time.sleep(0.5)
        now = _outbox_size(drill)
        if now != size:
            size, changed = now, time.monotonic()
        elif time.monotonic() - changed >= QUIET_SECONDS:
            return


def _started_at(execution: Mapping[str, Any]) -> float:
    start = execution["startDate"]
    return float(start.timestamp()) if hasattr(start, "timestamp") else float(parse_utc(start) or 0.0)


def _first_run(drill: Drill) -> dict[str, Any] | None:
    executions = sorted(drill.run.stack.executions(), key=_started_at)
    return executions[0] if executions else None


def _standby_killed_told_by_slurm(drill: Drill) -> None:
    lab, host = drill.lab, drill.backup
    before = _outbox_size(drill)
    # The node's aws before the install: the triggers the install fires at once are written
    # (and seen), not relayed: they started before this scenario's fault.
    node_aws_cli.install(lab.paths.aws_cli_dir, INTERPRETER, outbox=lab.paths.sns_outbox)
    try:
        drill.details["triggers"] = {
            name: result.to_json() for name, result in install_triggers(drill).items()
        }
        _quiet_outbox(drill)
        # What the active slurmctld's trigger programs start with: a lab brought up before the
        # lab had an AWS CLI directory runs them without it (`lab down`, then `lab up`).
        drill.details["active_slurmctld_path"] = slurmctld_path(lab, drill.primary)
        drill.details["fired_at_install"] = _events_written(drill, before)
        drill.note("fired by the install", ", ".join(drill.details["fired_at_install"]) or "nothing")
        with FailoverTopicRelay(lab, drill.run) as relay:
            drill.inject(
                f"SIGKILL of {host}'s slurmctld (the standby); nothing but Slurm's trigger is published, "
                "no watchdog tick",
                lambda: lab.kill_slurmctld(host),
            )
            run = poll(lambda: _first_run(drill), RUN_START_SECONDS, interval=0.2)
            if run is not None and drill.fault_at is not None:
                drill.details["run_started_seconds"] = round(_started_at(run) - drill.fault_at, 1)
                drill.note("the run started", f"{drill.details['run_started_seconds']} s after the fault")
            settle(drill)
        drill.details["relayed"] = [_relayed_json(drill, one) for one in relay.relayed]
        drill.details["relay_refused"] = list(relay.refused)
    finally:
        (lab.paths.aws_cli_dir / node_aws_cli.COMMAND).unlink(missing_ok=True)
        drill.details["triggers_cleared"] = clear_triggers(drill)
    # As systemd would: the restarted slurmctld runs its triggers' programs with the unit's PATH.
    drill.details["restarted_slurmctld_path"] = slurmctld_path(lab, host)


def _relayed_json(drill: Drill, relayed: Any) -> dict[str, Any]:
    try:
        parsed = parse_trigger_message(relayed.subject, relayed.message)
        event, on = parsed.event.name, parsed.host
    except TriggerMessageRejected:
        event, on = None, None
    fault = drill.fault_at or 0.0
    return {
        "subject": relayed.subject,
        "event": event,
        "host": on,
        "message_id": relayed.message_id,
        "written_seconds": round(relayed.written_at - fault, 1) if relayed.written_at else None,
        "relayed_seconds": round(relayed.relayed_at - fault, 1),
    }


def _run_trigger(execution: Mapping[str, Any]) -> dict[str, Any]:
    described = boto3.client("stepfunctions").describe_execution(executionArn=execution["executionArn"])
    trigger = json.loads(described["input"]).get("trigger")
    return trigger if isinstance(trigger, dict) else {}


def _told_by_slurm(drill: Drill, result: ScenarioResult) -> None:
    host, active = drill.backup, drill.primary
    triggers = drill.details.get("triggers", {})
    drill.check(
        "the stack's document installed every trigger on every controller",
        all(t.get("rc") == 0 and not t.get("failed") for t in triggers.values()) and len(triggers) == 2,
        str(triggers)[:300],
    )
    active_path = drill.details.get("active_slurmctld_path") or []
    drill.check(
        f"{active}'s slurmctld has the AWS CLI's directory on its PATH (else: a lab brought up by an "
        "older version; `lab down`, `lab up`)",
        str(drill.lab.paths.aws_cli_dir) in active_path,
        ":".join(active_path)[:300],
    )
    relayed = drill.details.get("relayed", [])
    failures = [r for r in relayed if r["event"] == FAILURE]
    drill.check(
        f"{active}'s slurmctld fired {FAILURE} once, its program published it (relayed)",
        [(r["host"], r["subject"]) for r in failures] == [(active, SUBJECT)],
        str(relayed)[:400],
    )
    drill.check("the relay refused nothing", not drill.details.get("relay_refused"), str(drill.details))
    first = _first_run(drill)
    trigger = _run_trigger(first) if first else {}
    drill.check(
        f"the first run's trigger is Slurm's: slurm-trigger, {FAILURE} on {active}",
        (trigger.get("source"), (trigger.get("summary") or {}).get("event"), trigger.get("id"))
        == ("slurm-trigger", FAILURE, failures[0]["message_id"] if failures else None),
        str(trigger)[:300],
    )
    sources = [_run_trigger(e).get("source") for e in drill.run.stack.executions()]
    drill.check("no run came from the watchdog (it never ticked)", "watchdog" not in sources, str(sources))
    actions = drill.details.get("restore_actions", [])
    drill.check(
        f"one restore action: start-slurmctld on {host}, restored",
        [(a.get("controller"), a.get("kind"), a.get("restored")) for a in actions]
        == [(host, "start-slurmctld", True)],
        str(actions)[:400],
    )
    drill.check(
        "the final verdict's redundancy is full",
        result.redundancy == "full",
        f"{result.redundancy}, ready standbys {list(result.standbys) or 'none'}",
    )
    drill.check(f"{host} logged the standby role again", last_role(drill.lab, host) == "standby")
    path = drill.details.get("restarted_slurmctld_path") or []
    drill.check(
        f"{host}'s restarted slurmctld has the AWS CLI's directory on its PATH (the unit's, not the "
        "restore's command's)",
        str(drill.lab.paths.aws_cli_dir) in path and str(drill.lab.paths.node_secret_dir) not in path,
        ":".join(path)[:300],
    )


TRIGGER_SCENARIOS: Final = (
    LabScenario(
        "standby-trigger-restored",
        "SIGKILL of ctl2's slurmctld (the standby) with the stack's Slurm triggers installed and no "
        "watchdog tick: ctl1's backup_slurmctld_failure starts the run, RestoreRedundancy=standbys "
        "starts ctl2 again",
        _standby_killed_told_by_slurm,
        frozenset({"HEALTHY"}),
        "HEALTHY (redundancy full again)",
        # The stack as deployed: its triggers re-checked by every run (SlurmTriggers on, the
        # template's default, which the lab's stack otherwise turns off).
        parameters={"RestoreRedundancy": "standbys", "SlurmTriggers": "on"},
        verify=_told_by_slurm,
        measured=True,
        defaults=True,
        runs=2,
        min_slurm="24.11",
        why=(
            "ctl1 serves throughout (HEALTHY). Slurm itself reports the dead standby: ctl1's slurmctld "
            "pings ctl2 every SlurmctldTimeout and fires backup_slurmctld_failure; the triggers' program "
            "publishes it on the failover topic; the run it starts sees no ready standby and hands the "
            "cluster to the restore, which starts ctl2's slurmctld; the restore's verification is "
            "HEALTHY with redundancy full. No watchdog tick is involved"
        ),
    ),
)
