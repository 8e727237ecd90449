"""``setSecret``, alternating: the other user of the pair (``<user>`` / ``<user>_clone``) is
created or given the password, and gets exactly the current user's grants; the current user
keeps working throughout.

Without a master secret the current user does all of this itself (no admin secret exists in
the HyperPod sample stack); what it needs is in :data:`REQUIRED_PRIVILEGES`. With one
(``MASTER_SECRET_ARN``, the RDS master secret, as AWS's multi-user rotation uses), the master
creates, re-passwords and grants the twin, so the slurmdbd user, whose password lies in
slurmdbd.conf on every controller, needs no administrative privilege at all.
"""

from __future__ import annotations

from hyperpod_ha.rotation.database import Connector, LoginFailed, PrivilegeMissing, Session, can_login
from hyperpod_ha.rotation.errors import RotationError
from hyperpod_ha.rotation.grant_copy import copy_grants
from hyperpod_ha.rotation.grants import Account, grants_of
from hyperpod_ha.rotation.secret import AWSCURRENT, DbSecret, Endpoint, alternate_username
from hyperpod_ha.rotation.settings import RotationSettings
from hyperpod_ha.rotation.versions import SecretVersions

REQUIRED_PRIVILEGES = {
    "single": "none beyond logging in: SET PASSWORD for one's own account needs no privilege",
    "alternating-with-master": (
        "the slurmdbd user: none beyond logging in; the master user: CREATE USER and every "
        "privilege the slurmdbd user holds, WITH GRANT OPTION (the RDS master user has them)"
    ),
    "alternating": (
        "CREATE USER (global; on MariaDB, INSERT and UPDATE on the mysql schema also do, and "
        "GRANT ALL ON `%`.* gives those) to create, re-password and reset the twin; GRANT OPTION on "
        "every privilege it holds (e.g. GRANT ALL ON `%`.* ... WITH GRANT OPTION), since the twin "
        "receives exactly its grants, GRANT OPTION included; ADMIN OPTION on every role it has. "
        "The twin sets its own default role, which needs nothing"
    ),
}


def set_alternating(
    versions: SecretVersions,
    connect: Connector,
    settings: RotationSettings,
    current: DbSecret,
    pending: DbSecret,
    endpoint: Endpoint,
) -> str:
    if pending.username != alternate_username(current.username):
        raise RotationError(
            f"alternating rotation: AWSPENDING names user {pending.username}, "
            f"expected {alternate_username(current.username)}"
        )
    try:
        own = connect(endpoint, current.username, current.password)
    except LoginFailed as failure:
        raise RotationError(f"AWSCURRENT cannot log in: {failure.reason}") from None
    admin = own
    try:
        source = own.current_account()
        if source.user != current.username:
            raise RotationError(f"AWSCURRENT logs in as {source}, not as user {current.username}")
        # Its own grants: SHOW GRANTS FOR CURRENT_USER() needs no privilege.
        source_grants = grants_of(source, own.own_grant_lines())
        if settings.master_secret_arn:
            admin = _master_session(versions, connect, settings.master_secret_arn, endpoint)
        target = Account(pending.username, source.host)
        outcome = "twin_ready"
        if not can_login(connect, endpoint, pending.username, pending.password):
            admin.create_or_reset_user(target, pending.password)
            outcome = "twin_password_set"
        changed = copy_grants(connect, admin, source_grants, target, endpoint, pending)
    except PrivilegeMissing as missing:
        needed = REQUIRED_PRIVILEGES[
            "alternating-with-master" if settings.master_secret_arn else "alternating"
        ]
        raise RotationError(f"{missing.reason}; the alternating strategy needs {needed}") from None
    finally:
        if admin is not own:
            admin.close()
        own.close()
    return f"{outcome}_grants_copied" if changed else outcome


def _master_session(versions: SecretVersions, connect: Connector, arn: str, endpoint: Endpoint) -> Session:
    master = versions.get(arn, stage=AWSCURRENT)
    try:
        return connect(endpoint, master.username, master.password)
    except LoginFailed as failure:
        raise RotationError(f"the master secret cannot log in: {failure.reason}") from None
