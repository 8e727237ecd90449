"""A real Slurm controller group on one machine: up, down, faults and queries.

Each lab host is a network namespace plus a long-lived "holder" process (:mod:`.hosts`);
the holders' PIDs are recorded in ``<root>/lab.json`` (:mod:`.lab_state`) and daemons are
found by looking in their host's PID namespace. :class:`Lab` gathers what each module adds:
bringing it up (:mod:`.build`) and down (:mod:`.teardown`), its daemons (:mod:`.daemon_control`),
its hosts' views of the network and the shared state (:mod:`.state_views`), a controller's
slurm.conf drifting from the shared copy (:mod:`.conf_drift`), a slurmctld that dies at every
start (:mod:`.crash_loop`), a user's text in slurmctld's log (:mod:`.forged_log`), users' load
(:mod:`.floods`), and queries (:mod:`.queries`).
"""

from __future__ import annotations

from hyperpod_lab.build import LabBuild
from hyperpod_lab.conf_drift import LabConfDrift
from hyperpod_lab.crash_loop import LabCrashLoop
from hyperpod_lab.daemon_control import LabDaemons
from hyperpod_lab.floods import LabFloods
from hyperpod_lab.forged_log import LabForgedLog
from hyperpod_lab.queries import LabQueries
from hyperpod_lab.state_views import LabViews


class Lab(LabBuild, LabConfDrift, LabCrashLoop, LabForgedLog, LabFloods, LabDaemons, LabViews, LabQueries):
    """The lab under ``topology.root``. Without a topology, the one of the lab running
    under ``root`` (from its state file), else two controllers and two nodes there."""
