"""The secret's versions in Secrets Manager: reading them by stage, storing AWSPENDING, moving
the labels, and a new password. The one place the rotation calls Secrets Manager."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.rotation.secret import (
    AWSCURRENT,
    AWSPENDING,
    EXCLUDED_CHARACTERS,
    PASSWORD_LENGTH,
    TESTED,
    DbSecret,
    check_password_alphabet,
    parse_secret,
)

if TYPE_CHECKING:
    from mypy_boto3_secretsmanager import SecretsManagerClient

Stages = Mapping[str, list[str]]


def rotation_in_progress(stages: Stages) -> bool:
    """A version is AWSPENDING and not yet AWSCURRENT: a rotation has started, not finished."""
    return any(AWSPENDING in labels and AWSCURRENT not in labels for labels in stages.values())


class SecretVersions:
    def __init__(self, secrets: SecretsManagerClient) -> None:
        self._secrets = secrets

    def describe(self, secret_id: str) -> Any:
        return self._secrets.describe_secret(SecretId=secret_id)

    def get(self, arn: str, *, stage: str, version: str | None = None) -> DbSecret:
        if version is None:
            response = self._secrets.get_secret_value(SecretId=arn, VersionStage=stage)
        else:
            response = self._secrets.get_secret_value(SecretId=arn, VersionId=version, VersionStage=stage)
        return parse_secret(response.get("SecretString"))

    def get_if_any(self, arn: str, *, stage: str, version: str | None = None) -> DbSecret | None:
        try:
            return self.get(arn, stage=stage, version=version)
        except ClientError as error:
            if error_code(error) == "ResourceNotFoundException":
                return None
            raise

    def put_pending(self, arn: str, token: str, secret: DbSecret) -> None:
        self._secrets.put_secret_value(
            SecretId=arn,
            ClientRequestToken=token,
            SecretString=secret.to_secret_string(),
            VersionStages=[AWSPENDING],
        )

    def move_current(self, arn: str, token: str, current_version: str | None) -> None:
        if current_version is None:
            self._secrets.update_secret_version_stage(
                SecretId=arn, VersionStage=AWSCURRENT, MoveToVersionId=token
            )
        else:
            self._secrets.update_secret_version_stage(
                SecretId=arn,
                VersionStage=AWSCURRENT,
                MoveToVersionId=token,
                RemoveFromVersionId=current_version,
            )

    def drop_pending_label(self, arn: str, token: str) -> None:
        self._secrets.update_secret_version_stage(
            SecretId=arn, VersionStage=AWSPENDING, RemoveFromVersionId=token
        )

    def mark_tested(self, arn: str, token: str, stages: Stages) -> None:
        """Put :data:`TESTED` on the token's version (taken off the version that had it)."""
        if TESTED in stages.get(token, []):
            return
        holder = next((version for version, labels in stages.items() if TESTED in labels), None)
        if holder is None:
            self._secrets.update_secret_version_stage(
                SecretId=arn, VersionStage=TESTED, MoveToVersionId=token
            )
        else:
            self._secrets.update_secret_version_stage(
                SecretId=arn, VersionStage=TESTED, MoveToVersionId=token, RemoveFromVersionId=holder
            )

    def new_password(self) -> str:
        password = self._secrets.get_random_password(
            PasswordLength=PASSWORD_LENGTH,
            ExcludeCharacters=EXCLUDED_CHARACTERS,
            IncludeSpace=False,
            RequireEachIncludedType=True,
        )["RandomPassword"]
        check_password_alphabet(password)
        return password
