"""``createSecret``: a new password from ``GetRandomPassword`` (only characters slurmdbd.conf
and a shell read literally), stored as the token's version with ``AWSPENDING``."""

from __future__ import annotations

from hyperpod_ha.rotation.contract import Strategy
from hyperpod_ha.rotation.secret import AWSCURRENT, AWSPENDING, alternate_username
from hyperpod_ha.rotation.settings import RotationSettings
from hyperpod_ha.rotation.versions import SecretVersions


def create_secret(versions: SecretVersions, settings: RotationSettings, arn: str, token: str) -> str:
    current = versions.get(arn, stage=AWSCURRENT)
    if versions.get_if_any(arn, stage=AWSPENDING, version=token) is not None:
        return "pending_exists"
    if settings.strategy is Strategy.ALTERNATING:
        username = alternate_username(current.username)
    else:
        username = current.username
    versions.put_pending(arn, token, current.with_credentials(username, versions.new_password()))
    return "pending_created"
