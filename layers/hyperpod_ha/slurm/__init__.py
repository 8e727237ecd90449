"""Parsing what Slurm's commands print on a controller, and the controller probe's output.

One module per family of output: :mod:`.ping` (``scontrol ping``), :mod:`.config`
(``scontrol show config``, slurm.conf), :mod:`.accounting` (``sacctmgr``, ``sdiag``'s slurmdbd
queue), :mod:`.controller_load` (``sdiag``'s figures, ``MaxDBDMsgs``), :mod:`.node_states`
(``sinfo``), :mod:`.role_log` (slurmctld's log: roles and takeover refusals),
:mod:`.heartbeat`, :mod:`.state_save`, :mod:`.host` (the node's identity and daemons),
:mod:`.failover_conf` (what the next failover needs: slurm.conf's link and hash, the version,
the ON/OFF programs), :mod:`.strigger_get` (the Slurm triggers the stack installs, as ``strigger
--get`` lists them); :mod:`.probe_output` splits the probe's output into those sections;
:mod:`.text` holds what they share. Every parser takes text from outside and either returns
typed values or raises :class:`SlurmOutputError` (an
:class:`~hyperpod_ha.errors.InputRejected`, so a ``ValueError``) with a reason that is safe
to log; none crashes on arbitrary text. Formats
are those of Slurm 22.05.8 and 24.11 (the captures in ``hyperpod_ha_dev``) and newer Slurm's
source. Pure parsing: imports only :mod:`hyperpod_ha.errors`, :mod:`hyperpod_ha.json_input`,
:mod:`hyperpod_ha.redaction` (excerpts are scrubbed) and the standard library.
Every name is re-exported here: ``from hyperpod_ha.slurm import parse_ping`` is a contract.
"""

from __future__ import annotations

from hyperpod_ha.slurm.accounting import (
    ClusterRegistration,
    DbdPing,
    parse_agent_queue_size,
    parse_cluster_registrations,
    parse_dbd_ping,
)
from hyperpod_ha.slurm.advisories import (
    ADVISORIES,
    Advisory,
    AppliedAdvisory,
    advisories_for,
    applying,
    release_of,
    walking,
)
from hyperpod_ha.slurm.conf_change import CONF_FILES, ConfChange, ConfFile, parse_conf_change
from hyperpod_ha.slurm.config import ControllerHost, SlurmConfig, parse_show_config, parse_slurm_conf
from hyperpod_ha.slurm.controller_load import (
    DBD_MSGS_FLOOR,
    ControllerLoad,
    RpcRow,
    dbd_message_limit,
    parse_sdiag,
)
from hyperpod_ha.slurm.errors import ProbeOutputError, SlurmOutputError
from hyperpod_ha.slurm.failover_conf import (
    PROGRAM_SLOTS,
    FailoverConf,
    PrimaryProgram,
    parse_failover_conf,
)
from hyperpod_ha.slurm.heartbeat import (
    HEARTBEAT_SIZE,
    MAX_CONTROLLER_INDEX,
    Heartbeat,
    decode_heartbeat,
    parse_heartbeat,
)
from hyperpod_ha.slurm.host import DaemonProcess, NodeIdentity, Services, parse_identity, parse_services
from hyperpod_ha.slurm.http_probes import READY, HttpProbes, parse_http_probes
from hyperpod_ha.slurm.hyperpod_hand import HyperpodHand, NodeAction, parse_hyperpod_hand
from hyperpod_ha.slurm.node_states import NodeStateCount, parse_node_states
from hyperpod_ha.slurm.notify_failures import NotifyFailures, parse_notify_failures
from hyperpod_ha.slurm.ping import PingLine, label_index, parse_ping
from hyperpod_ha.slurm.probe_output import (
    NOT_FOUND_CODE,
    PROBE_MARK,
    PROBE_RESULT_PREFIX,
    SECTIONS,
    TIMED_OUT_CODES,
    ProbeOutput,
    ProbeSection,
    parse_probe_output,
)
from hyperpod_ha.slurm.role_log import (
    REFUSAL_EVENTS,
    ROLE_EVENTS,
    FatalLine,
    LogLine,
    RefusalLine,
    RoleLine,
    RoleLog,
    classify_refusal_line,
    classify_role_line,
    log_line,
    parse_role_log,
)
from hyperpod_ha.slurm.state_save import StateSave, parse_state_save
from hyperpod_ha.slurm.strigger_get import (
    TRIGGER_PROGRAM_PATH,
    TriggerCheck,
    TriggerRow,
    installed_events,
    missing_events,
    parse_strigger_get,
    parse_trigger_check,
)
from hyperpod_ha.slurm.text import ERROR_LIMIT, TEXT_LIMIT, excerpt, first_error

__all__ = [
    "ADVISORIES",
    "CONF_FILES",
    "DBD_MSGS_FLOOR",
    "ERROR_LIMIT",
    "HEARTBEAT_SIZE",
    "MAX_CONTROLLER_INDEX",
    "NOT_FOUND_CODE",
    "PROBE_MARK",
    "PROBE_RESULT_PREFIX",
    "PROGRAM_SLOTS",
    "READY",
    "REFUSAL_EVENTS",
    "ROLE_EVENTS",
    "SECTIONS",
    "TEXT_LIMIT",
    "TIMED_OUT_CODES",
    "TRIGGER_PROGRAM_PATH",
    "Advisory",
    "AppliedAdvisory",
    "ClusterRegistration",
    "ConfChange",
    "ConfFile",
    "ControllerHost",
    "ControllerLoad",
    "DaemonProcess",
    "DbdPing",
    "FailoverConf",
    "FatalLine",
    "Heartbeat",
    "HttpProbes",
    "HyperpodHand",
    "LogLine",
    "NodeAction",
    "NodeIdentity",
    "NodeStateCount",
    "NotifyFailures",
    "PingLine",
    "PrimaryProgram",
    "ProbeOutput",
    "ProbeOutputError",
    "ProbeSection",
    "RefusalLine",
    "RoleLine",
    "RoleLog",
    "RpcRow",
    "Services",
    "SlurmConfig",
    "SlurmOutputError",
    "StateSave",
    "TriggerCheck",
    "TriggerRow",
    "advisories_for",
    "applying",
    "classify_refusal_line",
    "classify_role_line",
    "dbd_message_limit",
    "decode_heartbeat",
    "excerpt",
    "first_error",
    "installed_events",
    "label_index",
    "log_line",
    "missing_events",
    "parse_agent_queue_size",
    "parse_cluster_registrations",
    "parse_conf_change",
    "parse_dbd_ping",
    "parse_failover_conf",
    "parse_heartbeat",
    "parse_http_probes",
    "parse_hyperpod_hand",
    "parse_identity",
    "parse_node_states",
    "parse_notify_failures",
    "parse_ping",
    "parse_probe_output",
    "parse_role_log",
    "parse_sdiag",
    "parse_services",
    "parse_show_config",
    "parse_slurm_conf",
    "parse_state_save",
    "parse_strigger_get",
    "parse_trigger_check",
    "release_of",
    "walking",
]
