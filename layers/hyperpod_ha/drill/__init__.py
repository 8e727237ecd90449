"""Failover drills: a planned ``scontrol takeover`` with the recovery measured and recorded.

``models`` (what a drill is asked and reports), ``rules`` (pure decisions: refuse or plan,
measure, judge the jobs), ``node`` (the fixed commands the drill runs on controllers),
``adapters`` (the lease, SNS, OpsCenter, the state table) and ``steps`` (one function per
step of the drill state machine).
"""
