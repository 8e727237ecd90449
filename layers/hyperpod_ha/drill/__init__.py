"""Failover drills: a planned ``scontrol takeover`` with the recovery measured and recorded.

``models`` (what a drill is asked and reports), ``rules`` (pure decisions: refuse or plan,
measure, judge the jobs), ``report`` (the drill's report and summary), ``node`` (the fixed
commands the drill runs on controllers), what a drill touches: ``lease`` (the cluster's lease
in the state table), ``node_commands`` (the commands, through the command transport) and
``records`` (the topic and OpsCenter); ``steps`` (one function per step of the drill state
machine) and ``function`` (FailoverDrillFunction and its settings: its clients, one logged
step). It imports other runtime modules (commands, controllers, incidents, verdict, lease,
state_table, status_records, environment, request_fields, errors, aws_errors, observability,
node_scripts) and boto3 only in ``function``; nothing imports it but the drill's handler and the development
tools.
"""
