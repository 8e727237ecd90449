"""How a snapshot is named and marked: its request token, its tags, and so whose it is.

Every start is keyed on the execution: the ``ClientRequestToken`` is derived from the execution
ARN, and a backup tagged with the execution is found before any new one is asked for, so a
retried start never makes a second backup. Only backups tagged as this project's (and this
stack's, when named) for the cluster are ever counted or deleted.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from hyperpod_ha.snapshots.models import StartRequest

if TYPE_CHECKING:
    from mypy_boto3_fsx.type_defs import TagTypeDef

CREATED_BY = "hyperpod-ha"
TOKEN_LIMIT = 63
TAG_VALUE_LIMIT = 256


def client_request_token(purpose: str, execution_id: str) -> str:
    """An FSx ClientRequestToken (at most 63 of ``[A-Za-z0-9_.-]``) stable for one execution."""
    digest = hashlib.sha256(f"{purpose}\n{execution_id}".encode()).hexdigest()
    return f"hph-{re.sub(r'[^A-Za-z0-9_.-]', '-', purpose)[:16]}-{digest}"[:TOKEN_LIMIT]


def _tag_char(char: str) -> str:
    # FSx tag values allow letters, separators, numbers and _.:/=+-@ only.
    if char in "_.:/=+-@" or unicodedata.category(char)[0] in "LZN":
        return char
    return "_"


def tag_value(text: str) -> str:
    return "".join(_tag_char(c) for c in text)[:TAG_VALUE_LIMIT].strip()


def snapshot_tags(request: StartRequest, stack_name: str | None = None) -> list[TagTypeDef]:
    values = {
        "created-by": CREATED_BY,
        "stack": stack_name or "",
        "cluster": request.cluster,
        "execution": request.execution_id,
        "verdict": request.verdict,
        "reason": request.reason,
    }
    return [{"Key": key, "Value": tag_value(value)} for key, value in values.items() if value]


def tags_of(resource: Mapping[str, Any]) -> dict[str, str]:
    return {str(tag.get("Key")): str(tag.get("Value", "")) for tag in resource.get("Tags") or []}


def is_ours(backup: Mapping[str, Any], file_system_id: str, cluster: str, stack: str | None = None) -> bool:
    """Made by this project (this stack, when named) for this cluster, and (where the description
    says) of this file system."""
    tags = tags_of(backup)
    if tags.get("created-by") != CREATED_BY or tags.get("cluster") != tag_value(cluster):
        return False
    if stack and tags.get("stack") != tag_value(stack):
        return False
    described = (backup.get("FileSystem") or {}).get("FileSystemId") or backup.get("FileSystemId")
    return described in (None, file_system_id)


def backup_of_execution(backups: Iterable[Mapping[str, Any]], execution_id: str) -> Mapping[str, Any] | None:
    """The backup an earlier attempt of this execution made, if any."""
    wanted = tag_value(execution_id)
    for backup in backups:
        tags = tags_of(backup)
        if tags.get("created-by") == CREATED_BY and tags.get("execution") == wanted:
            return backup
    return None
