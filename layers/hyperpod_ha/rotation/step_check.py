"""``testSecret``: AWSPENDING logs in (and, alternating, has the current user's grants)."""

from __future__ import annotations

from hyperpod_ha.rotation.contract import Strategy
from hyperpod_ha.rotation.database import Connector, LoginFailed, session
from hyperpod_ha.rotation.errors import RotationError
from hyperpod_ha.rotation.grant_copy import require_same_grants
from hyperpod_ha.rotation.grants import grants_of
from hyperpod_ha.rotation.secret import AWSCURRENT, AWSPENDING
from hyperpod_ha.rotation.settings import RotationSettings
from hyperpod_ha.rotation.versions import SecretVersions


def test_secret(
    versions: SecretVersions, connect: Connector, settings: RotationSettings, arn: str, token: str
) -> str:
    pending = versions.get(arn, stage=AWSPENDING, version=token)
    endpoint = pending.endpoint(settings.default_host, settings.default_port)
    try:
        with session(connect, endpoint, pending.username, pending.password) as twin:
            twin.ping()
            account = twin.current_account()
            if account.user != pending.username:
                raise RotationError(f"AWSPENDING logs in as {account}, not as user {pending.username}")
            if settings.strategy is Strategy.SINGLE:
                return "pending_logs_in"
            twin_grants = grants_of(account, twin.own_grant_lines())
    except LoginFailed:
        raise RotationError(f"AWSPENDING cannot log in as {pending.username}") from None
    current = versions.get(arn, stage=AWSCURRENT)
    with session(connect, endpoint, current.username, current.password) as admin:
        source = admin.current_account()
        source_grants = grants_of(source, admin.own_grant_lines())
    require_same_grants(source_grants, twin_grants, account)
    return "pending_logs_in_with_same_grants"
