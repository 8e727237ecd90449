"""Failover drills: a planned ``scontrol takeover`` with the recovery measured and recorded.

``models`` (what a drill is asked and reports), ``rules`` (pure decisions: refuse or plan,
measure, judge the jobs), ``report`` (the drill's report and summary), ``node`` (the fixed
commands the drill runs on controllers and what their output says of jobs), ``node_commands``
(its three documents, through the kit's ``NodeDocuments``) and ``records`` (the topic and
OpsCenter); ``steps`` (one function per step of the drill state machine) and ``function``
(FailoverDrillFunction and its settings: its clients, one logged step). The lease, the re-check
before a command and the reading of a node script's output are the kit's (``acting``), shared
with the restore. It imports other runtime modules (acting, commands, controllers, incidents,
verdict, lease, status_records, environment, request_fields, errors, aws_errors,
observability, node_scripts) and boto3 only in ``function``; nothing imports it but the drill's
handler and the development tools.
"""
