"""hyperpod-ha: keeps SageMaker HyperPod Slurm clusters with several head nodes honest.

Plain, typed modules named after the domain; AWS access sits in small adapters that take
their boto3 client as an argument. Handlers under ``functions/`` are thin wrappers.
"""
