"""The real Slurm HA lab: a HyperPod-like controller group on network namespaces (root only).

``Lab(Topology(controllers=2, nodes=2)).up(db_password)`` brings up controllers ``ctl1``..
(each slurmctld plus its own slurmdbd on the local MariaDB), compute nodes ``node1``.., a
shared StateSaveLocation standing in for FSx for Lustre, and ``Lab.down()`` removes it all.
:class:`~hyperpod_lab.runner.LabRunner` runs commands on the hosts like the SSM agent does
(importing this package registers it as the ``lab`` command transport). It imports, of
hyperpod-ha, only the command transports' interface (``hyperpod_ha.commands``) and the logger.
"""

from hyperpod_lab.lab import Lab
from hyperpod_lab.lab_state import Heartbeat, UpReport
from hyperpod_lab.processes import LabError, LabTimeout
from hyperpod_lab.runner import LabRequestError, LabRunner
from hyperpod_lab.topology import Host, LabConfigError, Topology

__all__ = [
    "Heartbeat",
    "Host",
    "Lab",
    "LabConfigError",
    "LabError",
    "LabRequestError",
    "LabRunner",
    "LabTimeout",
    "Topology",
    "UpReport",
]
