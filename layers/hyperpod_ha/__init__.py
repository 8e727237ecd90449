"""hyperpod-ha: keeps SageMaker HyperPod Slurm clusters with several head nodes honest.

The runtime package, shipped as the Lambda layer as it is: one subpackage per feature
(ingestion, runs, watchdog, controllers, slurm, verdict, snapshots, incidents, drill, rotation,
commands) and the few modules they share (errors, environment, aws_errors, json_input, lease,
state_table, topic_messages, console_links, redaction, status_records, observability). It imports only
itself, the standard library and the layer's dependencies (boto3, Powertools, PyMySQL,
websockets), never the development tools (``hyperpod_ha_dev``), the lab or the tests.
"""
