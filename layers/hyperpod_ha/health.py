"""One controller's health report: the names this module had, now in :mod:`hyperpod_ha.controllers`."""

from __future__ import annotations

from hyperpod_ha.controllers.check import (
    NON_INTERACTIVE_DOCUMENT,
    SHELL_SCRIPT_DOCUMENT,
    check_controller,
    probe_parameters,
    probe_request,
    report_from_result,
)
from hyperpod_ha.controllers.decoding import LIST_LIMIT
from hyperpod_ha.controllers.errors import ControllerCheckThrottled, ControllerInputError, ReportRejected
from hyperpod_ha.controllers.evidence import controller_position
from hyperpod_ha.controllers.models import (
    REPORT_JSON_LIMIT,
    RUNNING,
    ConfigEvidence,
    ControllerNode,
    ControllerReport,
    DaemonEvidence,
    DbdEvidence,
    HeartbeatEvidence,
    NodeEvidence,
    PingEvidence,
    ReportStatus,
    RoleEvidence,
    SchedulerEvidence,
    StateSaveEvidence,
)

__all__ = [
    "LIST_LIMIT",
    "NON_INTERACTIVE_DOCUMENT",
    "REPORT_JSON_LIMIT",
    "RUNNING",
    "SHELL_SCRIPT_DOCUMENT",
    "ConfigEvidence",
    "ControllerCheckThrottled",
    "ControllerInputError",
    "ControllerNode",
    "ControllerReport",
    "DaemonEvidence",
    "DbdEvidence",
    "HeartbeatEvidence",
    "NodeEvidence",
    "PingEvidence",
    "ReportRejected",
    "ReportStatus",
    "RoleEvidence",
    "SchedulerEvidence",
    "StateSaveEvidence",
    "check_controller",
    "controller_position",
    "probe_parameters",
    "probe_request",
    "report_from_result",
]
