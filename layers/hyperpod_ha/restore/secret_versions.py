"""Whether a rotation of the slurmdbd database secret is rolling out now (Secrets Manager).

A rotation writes its new password as the secret's ``AWSPENDING`` version, rolls it out to
every controller (slurmdbd restarted one at a time), then makes it ``AWSCURRENT``. A pending
version created within :data:`ROLLOUT_SECONDS` that is not current yet is a roll-out in
progress; an older one is what a failed rotation left behind, and blocks nothing."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from mypy_boto3_secretsmanager import SecretsManagerClient

# RotateDbSecretFunction's timeout (15 min) bounds one rotation step.
ROLLOUT_SECONDS: Final = 900


def rollout_in_progress(secrets: SecretsManagerClient, secret_arn: str, now: dt.datetime) -> str | None:
    """Why a roll-out is thought in progress, or ``None``."""
    listed = secrets.list_secret_version_ids(SecretId=secret_arn, IncludeDeprecated=False)
    for version in listed.get("Versions", []):
        stages = version.get("VersionStages", [])
        created = version.get("CreatedDate")
        if "AWSPENDING" not in stages or "AWSCURRENT" in stages or created is None:
            continue
        if (now - created).total_seconds() <= ROLLOUT_SECONDS:
            return (
                "a rotation of the database secret is rolling out (its AWSPENDING version is not current yet)"
            )
    return None


@dataclass(frozen=True)
class SecretRollouts:
    """The stack's database secret (none: nothing rolls out), its client made on first use."""

    secrets: Callable[[], SecretsManagerClient]
    secret_arn: str | None

    def in_progress(self, now: dt.datetime) -> str | None:
        return rollout_in_progress(self.secrets(), self.secret_arn, now) if self.secret_arn else None
