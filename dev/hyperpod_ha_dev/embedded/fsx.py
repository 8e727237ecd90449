"""What moto's FSx lacks, for the embedded stack, as a small and explicit double:

- backups progress: moto keeps a backup CREATING forever; here a backup is AVAILABLE from
  its first DescribeBackups on;
- DescribeDataRepositoryAssociations, CreateDataRepositoryTask, DescribeDataRepositoryTasks:
  a site links a file system to S3 with :func:`link_to_s3`; a task is EXECUTING when created
  and SUCCEEDED from its first describe on; ``ClientRequestToken`` makes creation idempotent.
"""

from __future__ import annotations

import json
from typing import Any

from hyperpod_ha_dev.embedded.account import ACCOUNT
from hyperpod_ha_dev.embedded.patching import Patch


def _store(backend: Any) -> dict[str, Any]:
    store: dict[str, Any] | None = getattr(backend, "_hyperpod_ha_repository", None)
    if store is None:
        store = {"associations": [], "tasks": {}, "tokens": {}}
        backend._hyperpod_ha_repository = store
    return store


def link_to_s3(file_system_id: str, bucket_path: str, region: str = "us-east-1") -> None:
    """Give a file system a data repository association (as an S3-linked PERSISTENT_2 has)."""
    from moto.fsx.models import fsx_backends

    store = _store(fsx_backends[ACCOUNT][region])
    store["associations"].append(
        {
            "AssociationId": f"dra-{len(store['associations']) + 1:017x}",
            "FileSystemId": file_system_id,
            "Lifecycle": "AVAILABLE",
            "FileSystemPath": "/",
            "DataRepositoryPath": bucket_path,
        }
    )


def patches() -> list[Patch]:
    """moto's FSx responses with the missing calls answered (applied by ``delivery.patched``)."""
    from moto.fsx.responses import FSxResponse

    def describe_data_repository_associations(self: Any) -> str:
        params = json.loads(self.body)
        wanted = {f["Name"]: f["Values"] for f in params.get("Filters", [])}
        found = [
            a
            for a in _store(self.fsx_backend)["associations"]
            if a["FileSystemId"] in wanted.get("file-system-id", [a["FileSystemId"]])
        ]
        return json.dumps({"Associations": found})

    def create_data_repository_task(self: Any) -> str:
        params = json.loads(self.body)
        store = _store(self.fsx_backend)
        token = params.get("ClientRequestToken")
        if token and token in store["tokens"]:
            return json.dumps({"DataRepositoryTask": store["tasks"][store["tokens"][token]]})
        task_id = f"task-{len(store['tasks']) + 1:017x}"
        task = {
            "TaskId": task_id,
            "Lifecycle": "EXECUTING",
            "Type": params["Type"],
            "FileSystemId": params["FileSystemId"],
            "Paths": params.get("Paths", []),
            "Report": params.get("Report", {}),
            "Tags": params.get("Tags", []),
        }
        store["tasks"][task_id] = task
        if token:
            store["tokens"][token] = task_id
        return json.dumps({"DataRepositoryTask": task})

    def describe_data_repository_tasks(self: Any) -> str:
        params = json.loads(self.body)
        tasks = _store(self.fsx_backend)["tasks"]
        ids = params.get("TaskIds") or list(tasks)
        found = []
        for task_id in ids:
            if task_id in tasks:
                task = tasks[task_id]
                answered = dict(task)
                task["Lifecycle"] = "SUCCEEDED"
                found.append(answered)
        return json.dumps({"DataRepositoryTasks": found})

    original_describe_backups = FSxResponse.describe_backups

    def describe_backups(self: Any) -> str:
        answer: str = original_describe_backups(self)
        for backup in self.fsx_backend.backups.values():
            if backup.lifecycle == "CREATING":
                backup.lifecycle = "AVAILABLE"
        return answer

    return [
        (FSxResponse, "describe_backups", describe_backups),
        (FSxResponse, "describe_data_repository_associations", describe_data_repository_associations),
        (FSxResponse, "create_data_repository_task", create_data_repository_task),
        (FSxResponse, "describe_data_repository_tasks", describe_data_repository_tasks),
    ]
