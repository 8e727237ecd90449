"""Drift that breaks the next failover: what each checked controller's own configuration says.

A standby takes over with its own slurmctld, reading its own slurm.conf: a controller whose
slurm.conf is a local copy (GNU ``sed -i`` on HyperPod's link to the shared copy replaces the
link with a file), differs from the others, names other controllers, another SlurmctldTimeout
or another StateSaveLocation, runs another Slurm version, or has no SlurmctldPrimaryOnProg/OffProg
(the programs that publish the failover topic's messages) fails over badly, or silently; with
``SlurmTriggers=on``, Slurm's triggers missing, or their program on a controller
(:mod:`.slurm_triggers`), leave a dead standby to the watchdog's next tick.
Controllers that could not be checked are not compared, and a field a controller could not
tell is left out of the comparison. These are problems: a serving cluster with drift is
DEGRADED; on DOWN and SPLIT_BRAIN they are told beside the reasons, never instead of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from hyperpod_ha.controllers.models import ControllerReport, FailoverConfigEvidence
from hyperpod_ha.verdict.observation import Observation, ObservedController
from hyperpod_ha.verdict.reasons import Reason, ReasonCode
from hyperpod_ha.verdict.slurm_triggers import trigger_problems

# The reason when a controller would publish nothing on the failover topic (both programs unset).
NOTIFICATIONS_OFF: Final = (
    "controller status notifications are off on {}: the failover topic will stay silent"
)
_ON, _OFF = "SlurmctldPrimaryOnProg", "SlurmctldPrimaryOffProg"
_WHEN: Final = {_ON: "takes control", _OFF: "gives up control"}
_STATES: Final = {"missing": "does not exist", "not_executable": "is not executable"}

Checked = Sequence[tuple[ObservedController, ControllerReport]]


def drift_problems(seen: Observation, active: ObservedController | None) -> list[Reason]:
    """Every drift between and on the checked controllers, each naming the controller(s)."""
    checked = [(c, c.checked) for c in seen.everyone if c.checked is not None]
    problems: list[Reason] = []
    for controller, report in checked:
        problems += _notifications(controller, report.failover, controller is active)
    problems += _local_copies(seen, checked)
    compared = _COMPARED
    if len({r.state_save.fstype for _, r in checked if r.state_save.fstype}) > 1:
        compared = compared[:-1]  # other file system types: the StateSaveLocation rule says so
    for code, what, value, shown in compared:
        differs = _differs(what, {c.key: value(r) for c, r in checked}, shown)
        if differs and what == "the Slurm version":
            links = [f"{c.key} -> {r.hyperpod.slurm_link}" for c, r in checked if r.hyperpod.slurm_link]
            differs += f" (/opt/slurm: {'; '.join(links)})" if links else ""
        if differs:
            problems.append(Reason(code, differs))
    return problems + trigger_problems(seen)


def _notifications(
    controller: ObservedController, failover: FailoverConfigEvidence, active: bool
) -> list[Reason]:
    """Programs not set (in the running configuration, for the active one, and in its slurm.conf)
    or set to a file that is missing or not executable."""
    key = controller.key
    views = [(f"{key}'s slurm.conf", failover.on_prog, failover.off_prog)]
    if active:
        running = ("the running configuration", failover.running_on_prog, failover.running_off_prog)
        views.insert(0, running)
    unset: dict[tuple[str, ...], list[str]] = {}
    for where, on, off in views:
        missing = tuple(name for name, program in ((_ON, on), (_OFF, off)) if program.configured is False)
        if missing:
            unset.setdefault(missing, []).append(where)
    problems = []
    for missing, seen_in in unset.items():
        places = " or ".join(seen_in)
        if len(missing) == 2:
            text = f"{NOTIFICATIONS_OFF.format(key)} (no {_ON} or {_OFF} in {places})"
            problems.append(Reason(ReasonCode.NOTIFICATIONS_OFF, text))
        else:
            (name,) = missing
            text = f"{name} is not set in {places}: the failover topic will not hear when {key} {_WHEN[name]}"
            problems.append(Reason(ReasonCode.NOTIFICATION_PROGRAM_UNSET, text))
    broken: dict[tuple[str, str, str], None] = {}
    for _, on, off in views:
        for name, program in ((_ON, on), (_OFF, off)):
            if program.path and program.state in _STATES:
                broken[(name, program.path, program.state)] = None
    for name, path, state in broken:
        text = (
            f"{name} {path} {_STATES[state]} on {key}: the failover topic will stay silent "
            f"when {key} {_WHEN[name]}"
        )
        problems.append(Reason(ReasonCode.NOTIFICATION_PROGRAM_BROKEN, text))
    return problems


def _local_copies(seen: Observation, checked: Checked) -> list[Reason]:
    linked = [c.key for c, r in checked if r.failover.conf_link is True]
    shared = {r.failover.conf_resolved for _, r in checked if r.failover.conf_link is True}
    strategy = seen.config_strategy
    # No public source says a strategy keeps a copy per controller; the agent writes the file.
    agent = f"; HyperPod's cluster agent also writes slurm.conf (SlurmConfigStrategy {strategy})"
    agent = agent if strategy else ""
    problems = []
    for controller, report in checked:
        failover, state = report.failover, report.state_save
        conf_device = _device(failover.conf_source, failover.conf_fstype)
        state_device = _device(state.source, state.fstype)
        # A file where others have the link, unless it is the very file their links resolve to.
        if failover.conf_link is False and linked and failover.conf_resolved not in shared:
            why = f"{failover.conf_path} is a file, not a link to the shared copy as on {', '.join(linked)}"
        elif conf_device and state_device and conf_device != state_device:
            why = (
                f"{failover.conf_resolved or failover.conf_path} is on {' '.join(conf_device)}, "
                f"not on the shared file system of StateSaveLocation ({' '.join(state_device)})"
            )
        else:
            continue
        problems.append(
            Reason(
                ReasonCode.SLURM_CONF_LOCAL_COPY,
                f"slurm.conf on {controller.key} is a local copy: {why}{agent}",
            )
        )
    return problems


def _device(source: str | None, fstype: str | None) -> tuple[str, str] | None:
    """A file system by its type and device; a bind mount's ``[/path]`` is the same device."""
    if not source or not fstype:
        return None
    return fstype, source.split("[", 1)[0]


def _differs(what: str, values: dict[str, str | None], shown: Callable[[str], str]) -> str | None:
    """``<what> differs between controllers: <value> on ctl1; <other> on ctl2`` when the known
    values are not all the same (compared whole, shown as ``shown`` says)."""
    groups: dict[str, list[str]] = {}
    for key, value in values.items():
        if value is not None:
            groups.setdefault(value, []).append(key)
    if len(groups) < 2:
        return None
    return f"{what} differs between controllers: " + "; ".join(
        f"{shown(value)} on {', '.join(keys)}" for value, keys in groups.items()
    )


def _hosts(report: ControllerReport) -> str | None:
    hosts = report.failover.controllers
    if not hosts:
        return None
    return " ".join(f"{h.name}({h.address})" if h.address else h.name for h in hosts)


def _timeout(report: ControllerReport) -> str | None:
    seconds = report.failover.slurmctld_timeout
    return None if seconds is None else f"{seconds} s"


def _state_device(report: ControllerReport) -> str | None:
    device = _device(report.state_save.source, report.state_save.fstype)
    return None if device is None else " ".join(device)


def _as_is(value: str) -> str:
    return value


# What is compared between the controllers, as each one's own slurm.conf, binary and mount say,
# the reason's code and how a value reads in it.
_Compared = tuple[ReasonCode, str, Callable[[ControllerReport], str | None], Callable[[str], str]]
_COMPARED: Final[tuple[_Compared, ...]] = (
    (
        ReasonCode.SLURM_CONF_DIFFERS,
        "slurm.conf",
        lambda r: r.failover.conf_sha256,
        lambda sha: f"sha256 {sha[:12]}",
    ),
    (ReasonCode.SLURM_VERSION_DIFFERS, "the Slurm version", lambda r: r.failover.version, _as_is),
    (ReasonCode.SLURMCTLD_HOSTS_DIFFER, "the SlurmctldHost list", _hosts, _as_is),
    (ReasonCode.SLURMCTLD_TIMEOUT_DIFFERS, "SlurmctldTimeout", _timeout, _as_is),
    (
        ReasonCode.STATE_SAVE_LOCATION_DIFFERS,
        "StateSaveLocation",
        lambda r: r.failover.state_save_location,
        _as_is,
    ),
    (ReasonCode.STATE_SAVE_DEVICE_DIFFERS, "StateSaveLocation's file system", _state_device, _as_is),
)
