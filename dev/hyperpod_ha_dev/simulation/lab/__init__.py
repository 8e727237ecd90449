"""The workflow's scenarios against the real Slurm lab: real faults, the real workflow, real verdicts.

``hyperpod-ha simulate <scenario> --lab`` (root only) brings the lab up if it is not
(:mod:`hyperpod_lab`), restores it to a clean, healthy baseline (:mod:`.baseline`), injects a
real fault (:mod:`.injections`, :mod:`.takeover_scenarios`, :mod:`.rotation_scenario`:
SIGKILL or SIGSTOP of a slurmctld, slurmdbd stopped, a controller cut off the network, a
read-only StateSaveLocation, a database secret rotation), triggers the workflow the way the
cluster would (the lifecycle scripts' SNS notification, or an operator run where the scripts
send nothing), and lets the embedded stack run unchanged (:mod:`.run`): its SageMaker cluster
lists the lab's controllers, and the health checks run the very probe HyperPod nodes get,
inside each controller's namespaces, through the ``lab-agent`` transport (:mod:`.transport`).
Afterwards the fault is repaired and the lab left up, clean, for the next scenario.
``hyperpod-ha drill start --lab`` runs the drill state machine against the lab the same way
(:mod:`.drill_run`). One lab per machine (:mod:`.lock`). It may import :mod:`hyperpod_ha`, the rest of
:mod:`hyperpod_ha_dev` and :mod:`hyperpod_lab`; its modules import one another, never this one.
"""

from hyperpod_ha_dev.simulation.lab.baseline import baseline_problems, restore_lab
from hyperpod_ha_dev.simulation.lab.catalog import LAB_SCENARIOS
from hyperpod_ha_dev.simulation.lab.errors import LabScenarioError, LabScenarioUnknown
from hyperpod_ha_dev.simulation.lab.lock import lab_lock
from hyperpod_ha_dev.simulation.lab.result import LabScenarioResult
from hyperpod_ha_dev.simulation.lab.rotation_scenario import LAB_SLURMDBD_CONF
from hyperpod_ha_dev.simulation.lab.run import lab_for, run_lab, run_lab_scenario

__all__ = [
    "LAB_SCENARIOS",
    "LAB_SLURMDBD_CONF",
    "LabScenarioError",
    "LabScenarioResult",
    "LabScenarioUnknown",
    "baseline_problems",
    "lab_for",
    "lab_lock",
    "restore_lab",
    "run_lab",
    "run_lab_scenario",
]
