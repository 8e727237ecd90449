"""A cluster's controllers: finding them and checking each one's health.

:mod:`.models` (a controller, a cluster's controllers, one controller's health report and its
evidence), :mod:`.decoding` (a report read back from the workflow's JSON, bounded),
:mod:`.naming` (pure: cluster names, SSM targets, Slurm node names), :mod:`.discovery` (the
SageMaker adapter), :mod:`.check` (running the probe through a command transport),
:mod:`.evidence` and :mod:`.shared_evidence` (the report's evidence from the probe's output),
:mod:`.configuration` (the settings of the functions that discover and check controllers).
The probe script itself is :mod:`hyperpod_ha.probe`. Imports only :mod:`hyperpod_ha` modules
(never the development tools).
"""
