"""Snapshots of the Slurm state kept on FSx for Lustre, for SnapshotStateFunction.

A *backup* where FSx allows one, else an *export* of the Slurm state path to the linked S3
repository, else an *unsupported* result saying why (a missing snapshot must not fail the
verification); old backups of this project are pruned. ``errors`` (the names the workflow
matches), ``settings`` (what snapshots are taken and kept by), ``models`` (requests and
results), the rules ``naming`` (request tokens, tags, whose backup), ``plan`` (what to copy),
``retention`` (which backups to keep, at most one per interval) and ``progress`` (a backup's or
task's state), ``fsx`` (the FSx calls), ``lifecycle`` (start, describe, retain) and ``function``
(SnapshotStateFunction: its settings and its requests, recorded for ``hyperpod-ha status``). It
may import ``hyperpod_ha``'s ``errors``, ``environment``, ``aws_errors``, ``request_fields``,
``observability``, ``controllers`` (cluster names) and ``status_records``; never the
development tools.
"""
