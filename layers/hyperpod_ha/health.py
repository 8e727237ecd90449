"""One controller's health report: run the probe through a CommandRunner, parse it, report.

The report is evidence, not a verdict: what this node's slurmctld and slurmdbd do, which role
its log says it took, what it sees of the heartbeat, StateSaveLocation, slurmdbd and the other
controllers. :mod:`hyperpod_ha.verdict` weighs the reports of all controllers together.

Reports travel through Step Functions as JSON of bounded size: every text field is cut to
:data:`TEXT_LIMIT` characters and every list to :data:`LIST_LIMIT` items, which keeps one
report under :data:`REPORT_JSON_LIMIT` bytes.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any, Final, TypeVar

from hyperpod_ha.commands import CommandError, CommandRequest, CommandResult, CommandRunner, Throttled
from hyperpod_ha.observability import logger
from hyperpod_ha.probe import probe_command
from hyperpod_ha.slurm import (
    NOT_FOUND_CODE,
    TEXT_LIMIT,
    ClusterRegistration,
    ControllerHost,
    NodeIdentity,
    NodeStateCount,
    PingLine,
    ProbeOutput,
    ProbeOutputError,
    ProbeSection,
    Services,
    SlurmConfig,
    SlurmOutputError,
    excerpt,
    first_error,
    parse_agent_queue_size,
    parse_cluster_registrations,
    parse_dbd_ping,
    parse_heartbeat,
    parse_identity,
    parse_node_states,
    parse_ping,
    parse_probe_output,
    parse_role_log,
    parse_services,
    parse_show_config,
    parse_slurm_conf,
    parse_state_save,
)

LIST_LIMIT: Final = 8
REPORT_JSON_LIMIT: Final = 24 * 1024
RUNNING: Final = "Running"
NON_INTERACTIVE_DOCUMENT: Final = "AWS-StartNonInteractiveCommand"
SHELL_SCRIPT_DOCUMENT: Final = "AWS-RunShellScript"
# /proc states of a process that exists but does not run: stopped (T, t); Z and X are dead.
_STOPPED: Final = frozenset({"T", "t"})
_DEAD: Final = frozenset({"Z", "X"})


class ReportStatus(StrEnum):
    CHECKED = "CHECKED"  # the probe ran to its end; the evidence below is this node's
    UNREACHABLE = "UNREACHABLE"  # SSM could not run the probe (reason says why)
    NOT_RUNNING = "NOT_RUNNING"  # the node's status is not Running: not probed
    PROBE_FAILED = "PROBE_FAILED"  # the probe ran but its output is missing or cut off


class ControllerInputError(ValueError):
    """The controller handed to the health check is not what discovery produces."""


class ReportRejected(ValueError):
    """A report (JSON) is not a controller report. The reason is safe to log."""


class ControllerCheckThrottled(Exception):
    """SSM throttled us; Step Functions retries the health check later.

    The state machine's Retry matches this class name (Lambda's ``errorType``): keep it.
    """


@dataclass(frozen=True)
class ControllerNode:
    """A controller as discovery hands it to the workflow's Map."""

    instance_id: str
    group: str
    status: str
    private_ip: str | None
    hostname: str | None
    target: str

    @classmethod
    def from_json(cls, data: object) -> ControllerNode:
        if not isinstance(data, Mapping):
            raise ControllerInputError("controller is not a JSON object")
        values: dict[str, str | None] = {}
        for name in ("instance_id", "group", "status", "target"):
            value = data.get(name)
            if not isinstance(value, str) or not value:
                raise ControllerInputError(f"controller field {name!r} is missing or not a string")
            values[name] = value[:TEXT_LIMIT]
        for name in ("private_ip", "hostname"):
            value = data.get(name)
            if value is not None and not isinstance(value, str):
                raise ControllerInputError(f"controller field {name!r} is not a string")
            values[name] = value[:TEXT_LIMIT] if value else None
        return cls(
            instance_id=str(values["instance_id"]),
            group=str(values["group"]),
            status=str(values["status"]),
            private_ip=values["private_ip"],
            hostname=values["hostname"],
            target=str(values["target"]),
        )


# --- evidence ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeEvidence:
    hostname: str | None = None
    addresses: tuple[str, ...] = ()
    controller_index: int | None = None  # this node's SlurmctldHost position (0 = configured primary)
    controller_name: str | None = None


@dataclass(frozen=True)
class ConfigEvidence:
    source: str | None = None  # "scontrol" (preferred) or "slurm.conf" (when slurmctld did not answer)
    cluster_name: str | None = None
    controllers: tuple[ControllerHost, ...] = ()
    slurmctld_timeout: int | None = None
    state_save_location: str | None = None
    log_file: str | None = None
    version: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class PingEvidence:
    lines: tuple[PingLine, ...] = ()  # this node's view of every controller
    exit_code: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class DaemonEvidence:
    running: bool | None = None  # None: not known
    stopped: bool = False  # a process is there but stopped (SIGSTOP): it answers nothing
    process_state: str | None = None
    pids: tuple[int, ...] = ()
    threads: int | None = None
    systemctl: str | None = None


@dataclass(frozen=True)
class RoleEvidence:
    logged: str | None = None  # last role line: primary, standby, taking_over, stopping, starting
    line: str | None = None
    line_age_seconds: int | None = None
    source: str | None = None
    error: str | None = None
    # Slurm 24.11: the standby's last reason for not taking over, logged after its last role
    # line ("heartbeat_unreadable", "heartbeat_updating", "undetermined", "waiting_for_heartbeat").
    refusal: str | None = None
    refusal_message: str | None = None
    refusal_age_seconds: int | None = None


@dataclass(frozen=True)
class HeartbeatEvidence:
    readable: bool | None = None
    writer_index: int | None = None  # position of the controller that wrote the last beat
    beat_time: int | None = None
    age_seconds: int | None = None  # by this node's clock
    path: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class StateSaveEvidence:
    path: str | None = None
    exists: bool | None = None
    mount_target: str | None = None
    fstype: str | None = None
    writable: bool | None = None
    writable_by_slurm_user: bool | None = None
    write_error: str | None = None  # why a file could not be created there
    error: str | None = None

    @property
    def effectively_writable(self) -> bool | None:
        # slurmctld writes as SlurmUser; root's result stands in when that could not be tried.
        if self.writable_by_slurm_user is not None:
            return self.writable_by_slurm_user
        return self.writable


@dataclass(frozen=True)
class DbdEvidence:
    reachable: bool | None = None
    registered_host: str | None = None  # ControlHost: the controller registered with slurmdbd
    registered_port: int | None = None
    ping_supported: bool | None = None
    agent_queue_size: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class SchedulerEvidence:
    answers: bool | None = None  # sinfo from this node reached an active controller
    node_states: tuple[NodeStateCount, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class ControllerReport:
    instance_id: str
    status: ReportStatus
    group: str | None = None
    node_status: str | None = None
    hostname: str | None = None
    private_ip: str | None = None
    target: str | None = None
    reason: str | None = None
    transport: str | None = None
    duration_seconds: float | None = None
    exit_code: int | None = None
    node: NodeEvidence = field(default_factory=NodeEvidence)
    config: ConfigEvidence = field(default_factory=ConfigEvidence)
    ping: PingEvidence = field(default_factory=PingEvidence)
    slurmctld: DaemonEvidence = field(default_factory=DaemonEvidence)
    slurmdbd: DaemonEvidence = field(default_factory=DaemonEvidence)
    role: RoleEvidence = field(default_factory=RoleEvidence)
    heartbeat: HeartbeatEvidence = field(default_factory=HeartbeatEvidence)
    state_save: StateSaveEvidence = field(default_factory=StateSaveEvidence)
    dbd: DbdEvidence = field(default_factory=DbdEvidence)
    scheduler: SchedulerEvidence = field(default_factory=SchedulerEvidence)
    notes: tuple[str, ...] = ()

    @property
    def checked(self) -> bool:
        return self.status is ReportStatus.CHECKED

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["status"] = self.status.value
        return data

    @classmethod
    def from_json(cls, data: object) -> ControllerReport:
        """Read a report back (from the workflow's state): types checked, sizes capped."""
        report = _decode(cls, data, "report")
        assert isinstance(report, cls)
        return report


_T = TypeVar("_T")


def _decode(hint: Any, value: object, where: str) -> Any:
    """JSON -> the typed value ``hint`` describes (dataclasses, tuples, optionals, enums)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None and type(None) in args:
            return None
        (inner,) = [arg for arg in args if arg is not type(None)]
        return _decode(inner, value, where)
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ReportRejected(f"{where} is not a list")
        item = typing.get_args(hint)[0]
        return tuple(_decode(item, one, f"{where}[{i}]") for i, one in enumerate(value[:LIST_LIMIT]))
    if isinstance(hint, type) and issubclass(hint, Enum):
        try:
            return hint(value)
        except ValueError:
            raise ReportRejected(f"{where} is not one of {[m.value for m in hint]}") from None
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _decode_dataclass(hint, value, where)
    return _decode_scalar(hint, value, where)


def _decode_dataclass(hint: type[Any], value: object, where: str) -> Any:
    if not isinstance(value, Mapping):
        raise ReportRejected(f"{where} is not an object")
    hints = typing.get_type_hints(hint)
    kwargs: dict[str, Any] = {}
    for one in dataclasses.fields(hint):
        if one.name in value:
            kwargs[one.name] = _decode(hints[one.name], value[one.name], f"{where}.{one.name}")
        elif one.default is dataclasses.MISSING and one.default_factory is dataclasses.MISSING:
            raise ReportRejected(f"{where}.{one.name} is missing")
    return hint(**kwargs)


# JSON scalar checks; bool is an int in Python, so it is excluded where a number is wanted.
_SCALARS: Final[dict[type, tuple[str, typing.Callable[[object], bool]]]] = {
    bool: ("a boolean", lambda v: isinstance(v, bool)),
    int: ("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    float: ("a number", lambda v: isinstance(v, int | float) and not isinstance(v, bool)),
    str: ("a string", lambda v: isinstance(v, str)),
}


def _decode_scalar(hint: Any, value: object, where: str) -> Any:
    if hint not in _SCALARS:
        raise TypeError(f"no JSON decoding for {hint!r}")  # a programming error, not bad input
    what, accepts = _SCALARS[hint]
    if not accepts(value):
        raise ReportRejected(f"{where} is not {what}")
    if hint is float:
        return float(typing.cast(float, value))
    if hint is str:
        return typing.cast(str, value)[:TEXT_LIMIT]
    return value


# --- running the probe ------------------------------------------------------------------


def probe_parameters(document: str) -> dict[str, list[str]]:
    """Parameters for the document that runs the probe.

    Our own Session document fixes the command (no parameters); the AWS documents take it as a
    parameter. With ``AWS-StartNonInteractiveCommand`` there is no exit code and stdout and
    stderr are merged: the probe's own final result line says it finished.
    """
    if document == NON_INTERACTIVE_DOCUMENT:
        return {"command": [probe_command()]}
    if document == SHELL_SCRIPT_DOCUMENT:
        return {"commands": [probe_command()]}
    return {}


def probe_request(node: ControllerNode, document: str, deadline_seconds: float) -> CommandRequest:
    return CommandRequest(
        target=node.target,
        document=document,
        deadline_seconds=deadline_seconds,
        parameters=probe_parameters(document),
    )


def check_controller(
    node: ControllerNode, runner: CommandRunner, *, document: str, deadline_seconds: float
) -> ControllerReport:
    """Probe one controller. Never raises for an unreachable node; raises
    :class:`ControllerCheckThrottled` when SSM throttles (the workflow retries)."""
    if node.status != RUNNING:
        return _report(node, ReportStatus.NOT_RUNNING, reason=f"node status is {node.status}: not probed")
    try:
        result = runner.run(probe_request(node, document, deadline_seconds))
    except Throttled as error:
        raise ControllerCheckThrottled(
            f"SSM throttled the probe of {node.instance_id}: {error.reason}"
        ) from error
    except CommandError as error:
        logger.warning(
            "controller unreachable",
            extra={
                "instance_id": node.instance_id,
                "error_type": type(error).__name__,
                "reason": error.reason,
            },
        )
        return _report(
            node,
            ReportStatus.UNREACHABLE,
            reason=excerpt(f"{type(error).__name__}: {error.reason}"),
            transport=runner.transport,
        )
    return report_from_result(node, result)


def _report(controller: ControllerNode, status: ReportStatus, **values: Any) -> ControllerReport:
    return ControllerReport(
        instance_id=controller.instance_id,
        status=status,
        group=controller.group,
        node_status=controller.status,
        hostname=controller.hostname,
        private_ip=controller.private_ip,
        target=controller.target,
        **values,
    )


def report_from_result(node: ControllerNode, result: CommandResult) -> ControllerReport:
    """The report for one probe run's output (pure: no I/O)."""
    run = {
        "transport": result.transport,
        "duration_seconds": round(result.duration_seconds, 3),
        "exit_code": result.exit_code,
    }
    try:
        output = parse_probe_output(result.stdout)
    except ProbeOutputError as problem:
        first = next((line for line in result.stdout.splitlines() if line.strip()), "")
        why = f"{problem}; output begins {excerpt(first, 120)!r}" if first else f"{problem}; no output"
        return _report(node, ReportStatus.PROBE_FAILED, reason=excerpt(why), **run)
    evidence = _evidence(node, output)
    notes = list(evidence.pop("notes"))
    if result.exit_code not in (None, 0):
        notes.append(f"probe exited {result.exit_code}")
    if result.stderr and result.stderr.strip():
        notes.append(f"probe stderr: {excerpt(result.stderr, 160)}")
    if not output.complete:
        return _report(
            node,
            ReportStatus.PROBE_FAILED,
            reason=(
                f"probe failed on the node: {output.error}"
                if output.error
                else "probe output ends before its result line: cut off or killed"
            ),
            notes=tuple(notes[:LIST_LIMIT]),
            **run,
            **evidence,
        )
    return _report(node, ReportStatus.CHECKED, notes=tuple(notes[:LIST_LIMIT]), **run, **evidence)


def _evidence(node: ControllerNode, output: ProbeOutput) -> dict[str, Any]:
    notes: list[str] = []
    for section in output.sections.values():
        if section.ran_out_of_time:
            notes.append(f"{section.name} timed out after {section.millis / 1000:.1f} s")
        if section.truncated:
            notes.append(f"{section.name} output truncated")
    config, config_evidence = _config(output)
    identity = _parsed(output, "identity", parse_identity)
    services = _parsed(output, "services", parse_services)
    return {
        "node": _node(node, config, identity),
        "config": config_evidence,
        "ping": _ping(output.sections.get("ping")),
        "slurmctld": _daemon(services, "slurmctld"),
        "slurmdbd": _daemon(services, "slurmdbd"),
        "role": _role(output.sections.get("role")),
        "heartbeat": _heartbeat(output.sections.get("heartbeat")),
        "state_save": _state_save(output.sections.get("state_save")),
        "dbd": _dbd(output, config),
        "scheduler": _scheduler(output.sections.get("sinfo")),
        "notes": notes,
    }


def _parsed(output: ProbeOutput, name: str, parser: typing.Callable[[str], _T]) -> _T | None:
    section = output.sections.get(name)
    if section is None or section.ran_out_of_time:
        return None
    try:
        return parser(section.text)
    except SlurmOutputError:
        return None


def _failure(section: ProbeSection | None) -> str | None:
    """Why a section says nothing, or None when its output is worth parsing."""
    if section is None:
        return "not in the probe output"
    if section.ran_out_of_time:
        return f"timed out after {section.millis / 1000:.1f} s"
    if section.exit_code == NOT_FOUND_CODE:
        return "command not found on the node"
    return None


def _config(output: ProbeOutput) -> tuple[SlurmConfig | None, ConfigEvidence]:
    shown = output.sections.get("config")
    problem = _failure(shown)
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
        config = _parsed(output, "slurm_conf", parse_slurm_conf)
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
    controllers: typing.Sequence[ControllerHost], names: set[str], addresses: set[str]
) -> ControllerHost | None:
    """The SlurmctldHost line naming a node (by host name, short name or address)."""
    for controller in controllers:
        if controller.name.lower() in names or controller.name.split(".", 1)[0].lower() in names:
            return controller
        if controller.name in addresses or (controller.address and controller.address in addresses):
            return controller
    return None


def _node(node: ControllerNode, config: SlurmConfig | None, identity: NodeIdentity | None) -> NodeEvidence:
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
    problem = _failure(section)
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
    problem = _failure(section)
    if problem is not None or section is None:
        return RoleEvidence(error=f"slurmctld log: {problem}")
    log = parse_role_log(section.text)
    last = log.last
    refusal = log.last_refusal
    refused = RoleEvidence(
        refusal=refusal.kind if refusal else None,
        refusal_message=refusal.message if refusal else None,
        refusal_age_seconds=log.age_seconds(refusal) if refusal else None,
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


def _heartbeat(section: ProbeSection | None) -> HeartbeatEvidence:
    if section is None:
        return HeartbeatEvidence(error="heartbeat: not in the probe output")
    if section.timed_out or section.exit_code == NOT_FOUND_CODE:
        # A heartbeat read that hangs is a hung shared file system: a takeover would be refused.
        return HeartbeatEvidence(readable=False, error=f"heartbeat: {_failure(section)}")
    try:
        beat = parse_heartbeat(section.text)
    except SlurmOutputError as error:
        return HeartbeatEvidence(readable=False, error=excerpt(f"heartbeat: {error}"))
    if beat.exists is False:
        return HeartbeatEvidence(readable=False, path=beat.path, error="heartbeat file does not exist")
    if beat.writer_index is None:
        why = beat.error or (_failure(section) if section.ran_out_of_time else None) or "heartbeat not read"
        return HeartbeatEvidence(readable=False, path=beat.path, error=excerpt(f"heartbeat: {why}"))
    return HeartbeatEvidence(
        readable=True,
        writer_index=beat.writer_index,
        beat_time=beat.beat_time,
        age_seconds=beat.age_seconds,
        path=beat.path,
    )


def _state_save(section: ProbeSection | None) -> StateSaveEvidence:
    if section is None or section.timed_out:
        return StateSaveEvidence(error=f"StateSaveLocation check: {_failure(section)}")
    state = parse_state_save(section.text)
    error = state.error
    if error is None and state.exists is None:
        error = _failure(section) or "no result"
    return StateSaveEvidence(
        path=state.path,
        exists=state.exists,
        mount_target=state.mount_target,
        fstype=state.fstype,
        writable=state.writable,
        writable_by_slurm_user=state.writable_by_slurm_user,
        write_error=state.slurm_user_write_error
        if state.writable_by_slurm_user is False
        else state.write_error,
        error=excerpt(f"StateSaveLocation check: {error}") if error else None,
    )


def _registration(rows: list[ClusterRegistration], cluster: str | None) -> ClusterRegistration | None:
    if cluster is not None:
        return next((row for row in rows if row.cluster == cluster), None)
    return rows[0] if len(rows) == 1 else None


def _dbd(output: ProbeOutput, config: SlurmConfig | None) -> DbdEvidence:
    known = DbdEvidence(ping_supported=_dbd_ping_supported(output), agent_queue_size=_agent_queue(output))
    clusters = output.sections.get("dbd_clusters")
    problem = _failure(clusters)
    if clusters is None or (problem is not None and not clusters.ran_out_of_time):
        return dataclasses.replace(known, error=f"sacctmgr show cluster: {problem}")
    if clusters.ran_out_of_time:
        return dataclasses.replace(known, reachable=False, error=f"sacctmgr show cluster: {problem}")
    if clusters.exit_code != 0:
        error = first_error(clusters.text) or f"exited {clusters.exit_code}"
        return dataclasses.replace(known, reachable=False, error=excerpt(f"sacctmgr show cluster: {error}"))
    try:
        rows = parse_cluster_registrations(clusters.text)
    except SlurmOutputError as error:
        return dataclasses.replace(known, reachable=True, error=excerpt(f"sacctmgr show cluster: {error}"))
    row = _registration(rows, config.cluster_name if config else None)
    return dataclasses.replace(
        known,
        reachable=True,
        registered_host=row.control_host if row else None,
        registered_port=row.control_port if row else None,
        error=None if row else "this cluster is not registered with slurmdbd",
    )


def _agent_queue(output: ProbeOutput) -> int | None:
    sdiag = output.sections.get("sdiag")
    if sdiag is None or sdiag.exit_code != 0:
        return None
    return parse_agent_queue_size(sdiag.text)


def _dbd_ping_supported(output: ProbeOutput) -> bool | None:
    section = output.sections.get("dbd_ping")
    if section is None or _failure(section) is not None:
        return None
    try:
        return parse_dbd_ping(section.text).supported
    except SlurmOutputError:
        return None


def _scheduler(section: ProbeSection | None) -> SchedulerEvidence:
    problem = _failure(section)
    if section is not None and section.ran_out_of_time:
        return SchedulerEvidence(answers=False, error=f"sinfo: {problem}")
    if problem is not None or section is None:
        return SchedulerEvidence(error=f"sinfo: {problem}")
    if section.exit_code != 0:
        error = first_error(section.text) or f"exited {section.exit_code}"
        return SchedulerEvidence(answers=False, error=excerpt(f"sinfo: {error}"))
    try:
        states = parse_node_states(section.text)
    except SlurmOutputError as error:
        return SchedulerEvidence(answers=True, error=excerpt(f"sinfo: {error}"))
    return SchedulerEvidence(answers=True, node_states=tuple(states[:LIST_LIMIT]))
