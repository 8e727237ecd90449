"""The four steps of the Secrets Manager rotation contract, for the accounting database.

Secrets Manager calls the function with ``{"Step", "SecretId", "ClientRequestToken"}`` and
retries a failed rotation from the start with the same token, so every step checks what is
already done before doing it:

- ``createSecret``: a new password from ``GetRandomPassword`` (only characters slurmdbd.conf
  and a shell read literally), stored as the token's version with ``AWSPENDING``.
- ``setSecret``: the database learns the password. ``single``: the user's own password is
  changed in place (AWSCURRENT stops working until ``finishSecret``). ``alternating``: the
  other user of the pair (``<user>`` / ``<user>_clone``) is created or given the password,
  and gets exactly the current user's grants; the current user keeps working throughout.
- ``testSecret``: AWSPENDING logs in (and, alternating, has the same grants).
- ``finishSecret``: AWSCURRENT moves to the token's version and AWSPENDING is taken off it.

Without a master secret the current user does all of this itself (no admin secret exists in
the HyperPod sample stack); what it needs is in :data:`REQUIRED_PRIVILEGES`. With one
(``MASTER_SECRET_ARN``, the RDS master secret, as AWS's multi-user rotation uses), the master
creates, re-passwords and grants the twin, so the slurmdbd user, whose password lies in
slurmdbd.conf on every controller, needs no administrative privilege at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from hyperpod_ha.observability import logger
from hyperpod_ha.rotation.database import (
    Connector,
    LoginFailed,
    PrivilegeMissing,
    Session,
    can_login,
    session,
)
from hyperpod_ha.rotation.grants import Account, Grant, GrantKind, grant_keys, grants_of
from hyperpod_ha.rotation.secret import (
    AWSCURRENT,
    AWSPENDING,
    AWSPREVIOUS,
    EXCLUDED_CHARACTERS,
    PASSWORD_LENGTH,
    DbSecret,
    Endpoint,
    alternate_username,
    check_password_alphabet,
    parse_secret,
)

if TYPE_CHECKING:
    from mypy_boto3_secretsmanager import SecretsManagerClient

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


class RotationRequestInvalid(ValueError):
    """The event, or the secret's rotation state, does not allow this step."""


class RotationError(Exception):
    """A step could not be completed. ``reason`` is safe to log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Strategy(Enum):
    ALTERNATING = "alternating"
    SINGLE = "single"

    @classmethod
    def parse(cls, value: str) -> Strategy:
        try:
            return cls(value.strip().lower())
        except ValueError:
            raise RotationRequestInvalid(
                f"ROTATION_STRATEGY must be one of {[s.value for s in cls]}, got {value!r}"
            ) from None


class Step(Enum):
    CREATE = "createSecret"
    SET = "setSecret"
    TEST = "testSecret"
    FINISH = "finishSecret"


@dataclass(frozen=True)
class RotationEvent:
    step: Step
    secret_id: str
    token: str

    @classmethod
    def parse(cls, event: Mapping[str, Any], default_secret_id: str | None = None) -> RotationEvent:
        try:
            step = Step(event.get("Step"))
        except ValueError:
            raise RotationRequestInvalid(
                f"Step must be one of {[s.value for s in Step]}, got {event.get('Step')!r}"
            ) from None
        secret_id = event.get("SecretId") or default_secret_id
        token = event.get("ClientRequestToken")
        if not isinstance(secret_id, str) or not secret_id:
            raise RotationRequestInvalid("the event has no SecretId and DB_SECRET_ARN is not set")
        if not isinstance(token, str) or not token:
            raise RotationRequestInvalid("the event has no ClientRequestToken")
        return cls(step, secret_id, token)


@dataclass(frozen=True)
class RotationSettings:
    strategy: Strategy
    default_host: str | None  # DB_HOST, for secrets without "host" (the HyperPod sample's)
    default_port: int = 3306
    # MASTER_SECRET_ARN: the secret of a user that creates and grants the twin (alternating).
    master_secret_arn: str | None = None


@dataclass(frozen=True)
class StepResult:
    step: Step
    secret_arn: str
    token: str
    outcome: str
    strategy: Strategy

    def to_json(self) -> dict[str, str]:
        return {
            "step": self.step.value,
            "secret_arn": self.secret_arn,
            "token": self.token,
            "outcome": self.outcome,
            "strategy": self.strategy.value,
        }


# Applied in this order: a role must be granted before it can be the default role.
_APPLY_ORDER = {GrantKind.PRIVILEGES: 0, GrantKind.PROXY: 1, GrantKind.ROLE: 2, GrantKind.DEFAULT_ROLE: 3}


class Rotation:
    def __init__(
        self, secrets: SecretsManagerClient, connector: Connector, settings: RotationSettings
    ) -> None:
        self._secrets = secrets
        self._connect = connector
        self._settings = settings

    # -- Secrets Manager side -------------------------------------------------------------

    def run(self, event: RotationEvent) -> StepResult:
        description = self._secrets.describe_secret(SecretId=event.secret_id)
        arn = description["ARN"]
        if not description.get("RotationEnabled"):
            raise RotationRequestInvalid(f"rotation is not enabled for secret {arn}")
        stages = description.get("VersionIdsToStages", {})
        if event.token not in stages:
            raise RotationRequestInvalid(f"version {event.token} of secret {arn} has no stage for rotation")
        if AWSCURRENT in stages[event.token]:
            if AWSPENDING in stages[event.token]:
                # A finishSecret that stopped between its two label moves: complete it.
                self._drop_pending_label(arn, event.token)
            logger.info(
                "version is already AWSCURRENT: nothing to do",
                extra={"step": event.step.value, "secret_arn": arn, "token": event.token},
            )
            return self._result(event, arn, "already_current")
        if AWSPENDING not in stages[event.token]:
            raise RotationRequestInvalid(f"version {event.token} of secret {arn} is not AWSPENDING")
        handler = {
            Step.CREATE: self.create_secret,
            Step.SET: self.set_secret,
            Step.TEST: self.test_secret,
            Step.FINISH: self.finish_secret,
        }[event.step]
        outcome = handler(arn, event.token, stages)
        logger.info(
            "rotation step done",
            extra={
                "step": event.step.value,
                "secret_arn": arn,
                "token": event.token,
                "outcome": outcome,
                "strategy": self._settings.strategy.value,
            },
        )
        return self._result(event, arn, outcome)

    def _result(self, event: RotationEvent, arn: str, outcome: str) -> StepResult:
        return StepResult(event.step, arn, event.token, outcome, self._settings.strategy)

    def _get(self, arn: str, *, stage: str, version: str | None = None) -> DbSecret:
        if version is None:
            response = self._secrets.get_secret_value(SecretId=arn, VersionStage=stage)
        else:
            response = self._secrets.get_secret_value(SecretId=arn, VersionId=version, VersionStage=stage)
        return parse_secret(response.get("SecretString"))

    def _get_if_any(self, arn: str, *, stage: str, version: str | None = None) -> DbSecret | None:
        try:
            return self._get(arn, stage=stage, version=version)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
                return None
            raise

    def _drop_pending_label(self, arn: str, token: str) -> None:
        self._secrets.update_secret_version_stage(
            SecretId=arn, VersionStage=AWSPENDING, RemoveFromVersionId=token
        )

    def _new_password(self) -> str:
        password = self._secrets.get_random_password(
            PasswordLength=PASSWORD_LENGTH,
            ExcludeCharacters=EXCLUDED_CHARACTERS,
            IncludeSpace=False,
            RequireEachIncludedType=True,
        )["RandomPassword"]
        check_password_alphabet(password)
        return password

    def _endpoint(self, secret: DbSecret) -> Endpoint:
        return secret.endpoint(self._settings.default_host, self._settings.default_port)

    # -- the four steps -------------------------------------------------------------------

    def create_secret(self, arn: str, token: str, stages: Mapping[str, list[str]]) -> str:
        current = self._get(arn, stage=AWSCURRENT)
        if self._get_if_any(arn, stage=AWSPENDING, version=token) is not None:
            return "pending_exists"
        if self._settings.strategy is Strategy.ALTERNATING:
            username = alternate_username(current.username)
        else:
            username = current.username
        pending = current.with_credentials(username, self._new_password())
        self._secrets.put_secret_value(
            SecretId=arn,
            ClientRequestToken=token,
            SecretString=pending.to_secret_string(),
            VersionStages=[AWSPENDING],
        )
        return "pending_created"

    def set_secret(self, arn: str, token: str, stages: Mapping[str, list[str]]) -> str:
        current = self._get(arn, stage=AWSCURRENT)
        pending = self._get(arn, stage=AWSPENDING, version=token)
        endpoint = self._endpoint(current)
        if self._endpoint(pending) != endpoint:
            raise RotationError("AWSPENDING points at another database than AWSCURRENT")
        if self._settings.strategy is Strategy.SINGLE:
            return self._set_single(arn, current, pending, endpoint, stages)
        return self._set_alternating(current, pending, endpoint)

    def test_secret(self, arn: str, token: str, stages: Mapping[str, list[str]]) -> str:
        pending = self._get(arn, stage=AWSPENDING, version=token)
        endpoint = self._endpoint(pending)
        try:
            with session(self._connect, endpoint, pending.username, pending.password) as twin:
                twin.ping()
                account = twin.current_account()
                if account.user != pending.username:
                    raise RotationError(f"AWSPENDING logs in as {account}, not as user {pending.username}")
                if self._settings.strategy is Strategy.SINGLE:
                    return "pending_logs_in"
                twin_grants = grants_of(account, twin.own_grant_lines())
        except LoginFailed:
            raise RotationError(f"AWSPENDING cannot log in as {pending.username}") from None
        current = self._get(arn, stage=AWSCURRENT)
        with session(self._connect, endpoint, current.username, current.password) as admin:
            source = admin.current_account()
            source_grants = grants_of(source, admin.own_grant_lines())
        _require_same_grants(source_grants, twin_grants, account)
        return "pending_logs_in_with_same_grants"

    def finish_secret(self, arn: str, token: str, stages: Mapping[str, list[str]]) -> str:
        current_version = next((v for v, labels in stages.items() if AWSCURRENT in labels), None)
        if current_version is None:
            # No AWSCURRENT anywhere (the secret was re-labelled by hand): just attach it.
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
        # Secrets Manager accepts AWSPENDING either on the new AWSCURRENT or nowhere; taking it
        # off makes the next rotation's start unambiguous (and moto insists on it).
        self._drop_pending_label(arn, token)
        return "current_moved"

    # -- strategies -----------------------------------------------------------------------

    def _set_single(
        self,
        arn: str,
        current: DbSecret,
        pending: DbSecret,
        endpoint: Endpoint,
        stages: Mapping[str, list[str]],
    ) -> str:
        if pending.username != current.username:
            raise RotationError("single-user rotation: AWSPENDING names another user than AWSCURRENT")
        if can_login(self._connect, endpoint, pending.username, pending.password):
            return "password_already_set"
        candidates = [(AWSCURRENT, current)]
        if any(AWSPREVIOUS in labels for labels in stages.values()):
            previous = self._get_if_any(arn, stage=AWSPREVIOUS)
            if previous is not None and previous.username == current.username:
                candidates.append((AWSPREVIOUS, previous))
        for label, candidate in candidates:
            try:
                with session(self._connect, endpoint, candidate.username, candidate.password) as own:
                    own.set_own_password(pending.password)
            except LoginFailed:
                logger.warning("cannot log in with a stored version", extra={"stage": label})
                continue
            return "password_changed"
        raise RotationError(
            f"no stored version (AWSCURRENT, AWSPREVIOUS) logs in as {current.username}: "
            "the password was changed outside this rotation"
        )

    def _set_alternating(self, current: DbSecret, pending: DbSecret, endpoint: Endpoint) -> str:
        if pending.username != alternate_username(current.username):
            raise RotationError(
                f"alternating rotation: AWSPENDING names user {pending.username}, "
                f"expected {alternate_username(current.username)}"
            )
        try:
            own = self._connect(endpoint, current.username, current.password)
        except LoginFailed as failure:
            raise RotationError(f"AWSCURRENT cannot log in: {failure.reason}") from None
        admin = own
        try:
            source = own.current_account()
            if source.user != current.username:
                raise RotationError(f"AWSCURRENT logs in as {source}, not as user {current.username}")
            # Its own grants: SHOW GRANTS FOR CURRENT_USER() needs no privilege.
            source_grants = grants_of(source, own.own_grant_lines())
            if self._settings.master_secret_arn:
                admin = self._master_session(self._settings.master_secret_arn, endpoint)
            target = Account(pending.username, source.host)
            outcome = "twin_ready"
            if not can_login(self._connect, endpoint, pending.username, pending.password):
                admin.create_or_reset_user(target, pending.password)
                outcome = "twin_password_set"
            changed = self._copy_grants(admin, source_grants, target, endpoint, pending)
        except PrivilegeMissing as missing:
            needed = (
                REQUIRED_PRIVILEGES["alternating-with-master"]
                if self._settings.master_secret_arn
                else REQUIRED_PRIVILEGES["alternating"]
            )
            raise RotationError(f"{missing.reason}; the alternating strategy needs {needed}") from None
        finally:
            if admin is not own:
                admin.close()
            own.close()
        return f"{outcome}_grants_copied" if changed else outcome

    def _master_session(self, arn: str, endpoint: Endpoint) -> Session:
        master = self._get(arn, stage=AWSCURRENT)
        try:
            return self._connect(endpoint, master.username, master.password)
        except LoginFailed as failure:
            raise RotationError(f"the master secret cannot log in: {failure.reason}") from None

    # The twin reads its own grants (SHOW GRANTS FOR another account needs SELECT on mysql.*).
    def _copy_grants(
        self,
        admin: Session,
        source_grants: list[Grant],
        target: Account,
        endpoint: Endpoint,
        pending: DbSecret,
    ) -> bool:
        wanted = grant_keys(source_grants)
        with session(self._connect, endpoint, pending.username, pending.password) as twin:
            twin_grants = grants_of(target, twin.own_grant_lines())
            had = grant_keys(twin_grants)
            extra = sorted(
                (g for g in twin_grants if g.key not in wanted), key=lambda g: -_APPLY_ORDER[g.kind]
            )
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
        with session(self._connect, endpoint, pending.username, pending.password) as twin:
            _require_same_grants(source_grants, grants_of(target, twin.own_grant_lines()), target)
        logger.info(
            "grants copied to the twin user",
            extra={"twin": str(target), "added": len(missing), "revoked": len(extra)},
        )
        return True


def _require_same_grants(source: list[Grant], twin: list[Grant], account: Account) -> None:
    missing = grant_keys(source) - grant_keys(twin)
    extra = grant_keys(twin) - grant_keys(source)
    if missing or extra:
        shown = [g.statement_for(account) for g in source if g.key in missing][:3]
        raise RotationError(
            f"{account} does not have the current user's grants: {len(missing)} missing, "
            f"{len(extra)} extra (missing, first ones: {shown})"
        )
