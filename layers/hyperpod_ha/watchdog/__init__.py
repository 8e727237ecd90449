"""The watchdog: a scheduled check of every controller, for failures that send no event; when the
cluster is not verified it starts a verification run through the cluster's lease. May import the
shared runtime modules (``cluster``, ``health``, ``verdict``, ``commands``, ``state_table``) and
:mod:`hyperpod_ha.runs`; only its handler imports it. Its old module's names are re-exported here."""

from hyperpod_ha.watchdog.controller_checks import MAX_PARALLEL_CHECKS, check_every_controller
from hyperpod_ha.watchdog.found_failures import FoundFailures
from hyperpod_ha.watchdog.service import Watchdog
from hyperpod_ha.watchdog.tick import TICK_SOURCE, Tick, TickRejected, TickResult, parse_tick

__all__ = [
    "MAX_PARALLEL_CHECKS",
    "TICK_SOURCE",
    "FoundFailures",
    "Tick",
    "TickRejected",
    "TickResult",
    "Watchdog",
    "check_every_controller",
    "parse_tick",
]
