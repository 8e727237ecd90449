"""Giving the twin user exactly the current user's grants, and checking that it has them."""

from __future__ import annotations

from hyperpod_ha.observability import logger
from hyperpod_ha.rotation.database import Connector, Session, session
from hyperpod_ha.rotation.errors import RotationError
from hyperpod_ha.rotation.grants import Account, Grant, GrantKind, grant_keys, grants_of
from hyperpod_ha.rotation.secret import DbSecret, Endpoint

# Applied in this order: a role must be granted before it can be the default role.
_APPLY_ORDER = {GrantKind.PRIVILEGES: 0, GrantKind.PROXY: 1, GrantKind.ROLE: 2, GrantKind.DEFAULT_ROLE: 3}


# The twin reads its own grants (SHOW GRANTS FOR another account needs SELECT on mysql.*).
def copy_grants(
    connect: Connector,
    admin: Session,
    source_grants: list[Grant],
    target: Account,
    endpoint: Endpoint,
    pending: DbSecret,
) -> bool:
    """True if the twin's grants had to change."""
    wanted = grant_keys(source_grants)
    with session(connect, endpoint, pending.username, pending.password) as twin:
        twin_grants = grants_of(target, twin.own_grant_lines())
        had = grant_keys(twin_grants)
        extra = sorted((g for g in twin_grants if g.key not in wanted), key=lambda g: -_APPLY_ORDER[g.kind])
        missing = [g for g in source_grants if g.key not in had]
        to_apply = sorted(source_grants if extra else missing, key=lambda g: _APPLY_ORDER[g.kind])
        if extra:
            # Per-privilege REVOKE needs the revoker to hold each privilege with GRANT
            # OPTION (the twin may hold ones the current user lacks); resetting the twin
            # needs only CREATE USER, and takes its roles too. Everything is re-applied next.
            admin.execute(
                f"reset the grants of {target}",
                f"REVOKE ALL PRIVILEGES, GRANT OPTION FROM {target.sql()}",
            )
            if any(g.kind is GrantKind.DEFAULT_ROLE for g in extra):
                # SET DEFAULT ROLE ... FOR another account needs UPDATE on mysql.*; for
                # itself an account needs nothing, so the twin does it.
                twin.execute(f"clear the default role of {target}", "SET DEFAULT ROLE NONE")
        for grant in to_apply:
            if grant.kind is GrantKind.DEFAULT_ROLE:
                twin.execute(f"set the default role of {target}", grant.head)
            else:
                admin.execute(f"copy a {grant.kind.value} grant to {target}", grant.statement_for(target))
    if not (extra or missing):
        return False
    with session(connect, endpoint, pending.username, pending.password) as twin:
        require_same_grants(source_grants, grants_of(target, twin.own_grant_lines()), target)
    logger.info(
        "grants copied to the twin user",
        extra={"twin": str(target), "added": len(missing), "revoked": len(extra)},
    )
    return True


def require_same_grants(source: list[Grant], twin: list[Grant], account: Account) -> None:
    missing = grant_keys(source) - grant_keys(twin)
    extra = grant_keys(twin) - grant_keys(source)
    if missing or extra:
        shown = [g.statement_for(account) for g in source if g.key in missing][:3]
        raise RotationError(
            f"{account} does not have the current user's grants: {len(missing)} missing, "
            f"{len(extra)} extra (missing, first ones: {shown})"
        )
