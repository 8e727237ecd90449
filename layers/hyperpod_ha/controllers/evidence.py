"""A report's evidence from the probe's output: this node's identity, configuration, daemons,
logged role and view of the controllers (:mod:`.shared_evidence`: of what they share)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Final

from hyperpod_ha.controllers import load_evidence, shared_evidence
from hyperpod_ha.controllers.decoding import LIST_LIMIT
from hyperpod_ha.controllers.models import (
    ConfChangeEvidence,
    ConfFileEvidence,
    ConfigEvidence,
    Controller,
    DaemonEvidence,
    HyperpodHandEvidence,
    NodeEvidence,
    NotifyFailuresEvidence,
    PingEvidence,
    RoleEvidence,
    SlurmctldHttpEvidence,
    SlurmTriggersEvidence,
)
from hyperpod_ha.controllers.sections import failure, parsed
from hyperpod_ha.slurm import (
    ControllerHost,
    NodeIdentity,
    ProbeOutput,
    ProbeSection,
    Services,
    SlurmConfig,
    SlurmOutputError,
    excerpt,
    first_error,
    parse_conf_change,
    parse_http_probes,
    parse_hyperpod_hand,
    parse_identity,
    parse_notify_failures,
    parse_ping,
    parse_role_log,
    parse_services,
    parse_show_config,
    parse_slurm_conf,
    parse_trigger_check,
)

# /proc states of a process that exists but does not run: stopped (T, t); Z and X are dead.
_STOPPED: Final = frozenset({"T", "t"})
_DEAD: Final = frozenset({"Z", "X"})


def evidence(node: Controller, output: ProbeOutput) -> dict[str, Any]:
    """The report's evidence fields (and its ``notes``) from one probe run's output."""
    notes: list[str] = []
    for section in output.sections.values():
        if section.ran_out_of_time:
            notes.append(f"{section.name} timed out after {section.millis / 1000:.1f} s")
        if section.truncated:
            notes.append(f"{section.name} output truncated")
    config, config_evidence = _config(output)
    identity = parsed(output, "identity", parse_identity)
    services = parsed(output, "services", parse_services)
    return {
        "node": _node(node, config, identity),
        "config": config_evidence,
        "ping": _ping(output.sections.get("ping")),
        "slurmctld": _daemon(services, "slurmctld"),
        "slurmdbd": _daemon(services, "slurmdbd"),
        "role": _role(output.sections.get("role")),
        "heartbeat": shared_evidence.heartbeat(output.sections.get("heartbeat")),
        "state_save": shared_evidence.state_save(output.sections.get("state_save")),
        "dbd": shared_evidence.dbd(output, config),
        "scheduler": shared_evidence.scheduler(output.sections.get("sinfo")),
        "failover": shared_evidence.failover_config(output),
        "load": load_evidence.load(output),
        "http": _http(output.sections.get("slurmctld_http")),
        "hyperpod": _hyperpod(output.sections.get("hyperpod_hand")),
        "conf_change": _conf_change(output.sections.get("conf_change")),
        "notify_failures": _notify_failures(output.sections.get("notify_failures")),
        "slurm_triggers": _slurm_triggers(output.sections.get("slurm_triggers")),
        "notes": notes,
    }


def _config(output: ProbeOutput) -> tuple[SlurmConfig | None, ConfigEvidence]:
    shown = output.sections.get("config")
    problem = failure(shown)
    config: SlurmConfig | None = None
    if problem is None and shown is not None:
        if shown.exit_code == 0:
            try:
                config = parse_show_config(shown.text)
            except SlurmOutputError as error:
                problem = str(error)
        else:
            problem = first_error(shown.text) or f"scontrol show config exited {shown.exit_code}"
    if config is None:
        # slurmctld did not answer: slurm.conf still says where the state and the log are.
        config = parsed(output, "slurm_conf", parse_slurm_conf)
    if config is None:
        return None, ConfigEvidence(error=excerpt(f"scontrol show config: {problem}") if problem else None)
    return config, ConfigEvidence(
        source=config.source,
        cluster_name=config.cluster_name,
        controllers=config.controllers[:LIST_LIMIT],
        slurmctld_timeout=config.slurmctld_timeout,
        state_save_location=config.state_save_location,
        log_file=config.log_file,
        version=config.version,
        error=excerpt(f"scontrol show config: {problem}") if problem else None,
    )


def _names(*names: str | None) -> set[str]:
    found: set[str] = set()
    for name in names:
        if name:
            found.update({name.lower(), name.split(".", 1)[0].lower()})
    return found


def controller_position(
    controllers: Sequence[ControllerHost], names: set[str], addresses: set[str]
) -> ControllerHost | None:
    """The SlurmctldHost line naming a node (by host name, short name or address)."""
    for controller in controllers:
        if controller.name.lower() in names or controller.name.split(".", 1)[0].lower() in names:
            return controller
        if controller.name in addresses or (controller.address and controller.address in addresses):
            return controller
    return None


def _node(node: Controller, config: SlurmConfig | None, identity: NodeIdentity | None) -> NodeEvidence:
    addresses = tuple(a for a in (identity.addresses if identity else ()) if not _loopback(a))
    position = None
    if config is not None:
        # The node's own view first; discovery's host name and address if that finds nothing.
        if identity is not None:
            position = controller_position(
                config.controllers, _names(identity.hostname, identity.fqdn), set(addresses)
            )
        if position is None:
            position = controller_position(
                config.controllers, _names(node.hostname), {node.private_ip} if node.private_ip else set()
            )
    return NodeEvidence(
        hostname=identity.hostname if identity else None,
        addresses=addresses[:LIST_LIMIT],
        controller_index=position.index if position else None,
        controller_name=position.name if position else None,
    )


def _loopback(address: str) -> bool:
    return address.startswith("127.") or address == "::1" or address.lower().startswith("fe80:")


def _ping(section: ProbeSection | None) -> PingEvidence:
    problem = failure(section)
    if problem is not None or section is None:
        return PingEvidence(
            exit_code=section.exit_code if section else None, error=f"scontrol ping: {problem}"
        )
    try:
        lines = parse_ping(section.text)
    except SlurmOutputError:
        error = first_error(section.text) or f"exited {section.exit_code} without output"
        return PingEvidence(exit_code=section.exit_code, error=excerpt(f"scontrol ping: {error}"))
    return PingEvidence(lines=tuple(lines[:LIST_LIMIT]), exit_code=section.exit_code)


def _daemon(services: Services | None, name: str) -> DaemonEvidence:
    if services is None:
        return DaemonEvidence()
    # Only this node's processes; of those, the main ones (not children of another of them).
    mine = [p for p in services.processes if p.name == name and p.same_namespace is not False]
    pids = {p.pid for p in mine}
    main = [p for p in mine if p.ppid not in pids]
    states = [p.state for p in main if p.state]
    running = any(state not in _STOPPED | _DEAD for state in states) or (bool(main) and not states)
    return DaemonEvidence(
        running=running,
        stopped=not running and any(state in _STOPPED for state in states),
        process_state=states[0] if states else None,
        pids=tuple(sorted(p.pid for p in main))[:LIST_LIMIT],
        threads=main[0].threads if main else None,
        systemctl=services.systemctl.get(name),
    )


def _role(section: ProbeSection | None) -> RoleEvidence:
    problem = failure(section)
    if problem is not None or section is None:
        return RoleEvidence(error=f"slurmctld log: {problem}")
    log = parse_role_log(section.text)
    last = log.last
    refusal = log.last_refusal
    refused = RoleEvidence(
        refusal=refusal.kind if refusal else None,
        refusal_message=refusal.message if refusal else None,
        refusal_age_seconds=log.age_seconds(refusal) if refusal else None,
        fatal_message=log.fatal.message if log.fatal else None,
        fatal_age_seconds=log.age_seconds(log.fatal) if log.fatal else None,
        settled_age_seconds=next(
            (log.age_seconds(line) for line in reversed(log.lines) if line.event in ("primary", "standby")),
            None,
        ),
    )
    if last is None:
        return dataclasses.replace(
            refused, source=log.source, error=excerpt(f"no role line found in {log.source or 'any log'}")
        )
    return dataclasses.replace(
        refused,
        logged=last.event,
        line=last.text,
        line_age_seconds=log.age_seconds(last),
        source=excerpt(log.source) if log.source else None,
    )


def _http(section: ProbeSection | None) -> SlurmctldHttpEvidence:
    """What this node's slurmctld answered on /readyz and /livez (Slurm 25.11+)."""
    problem = failure(section)
    if problem is not None or section is None:
        return SlurmctldHttpEvidence(why=f"/readyz: {problem}")
    probes = parse_http_probes(section.text)
    return SlurmctldHttpEvidence(
        served=probes.served, readyz=probes.readyz, livez=probes.livez, why=probes.why
    )


def _hyperpod(section: ProbeSection | None) -> HyperpodHandEvidence:
    """/opt/slurm's link and the nodes HyperPod is replacing or rebooting (the first 8)."""
    problem = failure(section)
    if problem is not None or section is None:
        return HyperpodHandEvidence(error=f"HyperPod's node actions: {problem}")
    hand = parse_hyperpod_hand(section.text)
    return HyperpodHandEvidence(
        slurm_link=hand.slurm_link,
        node_actions=tuple(str(action) for action in hand.node_actions[:LIST_LIMIT]),
        error=hand.actions_error,
    )


def _conf_change(section: ProbeSection | None) -> ConfChangeEvidence:
    """The configuration files' ages and hashes, and slurmctld's last death by a signal."""
    problem = failure(section)
    if problem is not None or section is None:
        return ConfChangeEvidence(error=f"configuration files: {problem}")
    found = parse_conf_change(section.text)
    now = found.now

    def age(when: int | None) -> int | None:
        return None if when is None or now is None else max(now - when, 0)

    return ConfChangeEvidence(
        files=tuple(ConfFileEvidence(f.name, f.exists, age(f.mtime), f.sha256) for f in found.files),
        signal_status=found.signal_status,
        signal_age_seconds=age(found.signal_time),
        error=found.error,
    )


def _notify_failures(section: ProbeSection | None) -> NotifyFailuresEvidence:
    """The ON/OFF program's failed publishes; no file is none failed."""
    problem = failure(section)
    if problem is not None or section is None:
        return NotifyFailuresEvidence(error=f"notification_attempts.log: {problem}")
    found = parse_notify_failures(section.text)
    return NotifyFailuresEvidence(
        path=found.path,
        failures=0 if found.exists is False else found.failures,
        last_failure=found.last_failure,
        age_seconds=found.age_seconds,
        error=found.error,
    )


def _slurm_triggers(section: ProbeSection | None) -> SlurmTriggersEvidence:
    """Which of the stack's triggers the active slurmctld lacks, and this node's program."""
    problem = failure(section)
    if problem is not None or section is None:
        return SlurmTriggersEvidence(error=f"strigger --get: {problem}")
    check = parse_trigger_check(section.text, section.exit_code)
    missing = check.missing
    return SlurmTriggersEvidence(
        answered=check.answered,
        missing_count=None if missing is None else len(missing),
        missing=(missing or ())[:LIST_LIMIT],
        program_state=check.program_state,
        program_topic=check.program_topic,
        error=check.error,
    )
