"""Slurm's own triggers on the cluster, installed and re-checked by the stack.

``slurm_triggers_node.sh`` (the one script, in the ``SlurmTriggersDocument``: ``install`` writes
the trigger program on the controller and sets the missing triggers as SlurmUser; ``list`` only
reads) and ``node`` (its command, its parameters and what its output says). The events and the
message the program publishes are :mod:`hyperpod_ha.slurm.triggers`; ``strigger --get`` is read by
:mod:`hyperpod_ha.slurm.strigger_get`. It imports ``node_scripts``, ``acting.node_commands``,
``slurm`` and ``errors``; the watchdog runs the install (``watchdog.trigger_install``).
"""
