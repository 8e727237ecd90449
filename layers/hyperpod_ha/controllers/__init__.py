"""A cluster's controllers: finding them and checking each one's health. :mod:`.models` holds
a controller, a cluster's controllers and one controller's report with its evidence;
:mod:`.decoding` reads a report back from the workflow's JSON, bounded; :mod:`.naming` is pure
(cluster names, SSM targets, Slurm node names); :mod:`.orchestration` reads how HyperPod runs
Slurm (config strategy, external accounting database); :mod:`.maintenance` whether the cluster
or a controller is being updated (its statuses); :mod:`.discovery` asks SageMaker for them;
:mod:`.check` runs the probe (:mod:`hyperpod_ha.probe`) through a command transport, and
:mod:`.evidence`, :mod:`.shared_evidence` and :mod:`.sections` turn its output into evidence;
:mod:`.function` holds the two functions that discover and check (DiscoverControllersFunction,
HealthCheckFunction) with their settings, :mod:`.settings` the probe's settings, which the
watchdog also reads; :mod:`.errors` the feature's errors. It imports other runtime modules
(commands, slurm, probe, errors, environment, request_fields, observability), never the
development tools, the lab or the tests.
"""
