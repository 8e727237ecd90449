"""The kit for acting on a controller, which the drill and the restore (``drill``, ``restore``)
share: ``execution_lease`` (the cluster's lease held by a drill's or a restore's execution, the
begin step that takes it and the re-check every acting step makes: this execution holds it and
the node is a controller discovered now), ``node_commands`` (a Session document run on a
controller through the command transport, and its script's output: ``key=value`` lines, other
rows, and the result line ``RESULT_MARK rc=<n>``) and ``controller_node.sh`` (the bash every
node script of theirs starts with: PATH, the result line, this node's own slurmctld, slurmdbd's
registered controller). It imports commands, controllers, lease, state_table, errors and
node_scripts; the drill and the restore import it, nothing else does.
"""
