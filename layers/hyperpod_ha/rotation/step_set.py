"""``setSecret``: the database learns the password.

``single``: the user's own password is changed in place (AWSCURRENT stops working until
``finishSecret``). ``alternating``: see :mod:`.step_set_alternating`.
"""

from __future__ import annotations

from hyperpod_ha.observability import logger
from hyperpod_ha.rotation.contract import Strategy
from hyperpod_ha.rotation.database import Connector, LoginFailed, can_login, session
from hyperpod_ha.rotation.errors import RotationError
from hyperpod_ha.rotation.secret import AWSCURRENT, AWSPENDING, AWSPREVIOUS, DbSecret, Endpoint
from hyperpod_ha.rotation.settings import RotationSettings
from hyperpod_ha.rotation.step_set_alternating import set_alternating
from hyperpod_ha.rotation.versions import SecretVersions, Stages


def set_secret(
    versions: SecretVersions,
    connect: Connector,
    settings: RotationSettings,
    arn: str,
    token: str,
    stages: Stages,
) -> str:
    current = versions.get(arn, stage=AWSCURRENT)
    pending = versions.get(arn, stage=AWSPENDING, version=token)
    endpoint = current.endpoint(settings.default_host, settings.default_port)
    if pending.endpoint(settings.default_host, settings.default_port) != endpoint:
        raise RotationError("AWSPENDING points at another database than AWSCURRENT")
    if settings.strategy is Strategy.SINGLE:
        return _set_single(versions, connect, arn, current, pending, endpoint, stages)
    return set_alternating(versions, connect, settings, current, pending, endpoint)


def _set_single(
    versions: SecretVersions,
    connect: Connector,
    arn: str,
    current: DbSecret,
    pending: DbSecret,
    endpoint: Endpoint,
    stages: Stages,
) -> str:
    if pending.username != current.username:
        raise RotationError("single-user rotation: AWSPENDING names another user than AWSCURRENT")
    if can_login(connect, endpoint, pending.username, pending.password):
        return "password_already_set"
    candidates = [(AWSCURRENT, current)]
    if any(AWSPREVIOUS in labels for labels in stages.values()):
        previous = versions.get_if_any(arn, stage=AWSPREVIOUS)
        if previous is not None and previous.username == current.username:
            candidates.append((AWSPREVIOUS, previous))
    for label, candidate in candidates:
        try:
            with session(connect, endpoint, candidate.username, candidate.password) as own:
                own.set_own_password(pending.password)
        except LoginFailed:
            logger.warning("cannot log in with a stored version", extra={"stage": label})
            continue
        return "password_changed"
    raise RotationError(
        f"no stored version (AWSCURRENT, AWSPREVIOUS) logs in as {current.username}: "
        "the password was changed outside this rotation"
    )
