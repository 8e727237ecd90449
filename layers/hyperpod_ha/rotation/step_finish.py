"""``finishSecret``: AWSCURRENT moves to the token's version and AWSPENDING is taken off it,
only for a version whose ``testSecret`` passed (:data:`~hyperpod_ha.rotation.secret.TESTED`)."""

from __future__ import annotations

from hyperpod_ha.rotation.errors import RotationRequestInvalid
from hyperpod_ha.rotation.secret import AWSCURRENT, TESTED
from hyperpod_ha.rotation.versions import SecretVersions, Stages


def finish_secret(versions: SecretVersions, arn: str, token: str, stages: Stages) -> str:
    if TESTED not in stages.get(token, []):
        # Secrets Manager calls finishSecret only after testSecret passed: anything else is a
        # direct invoke that would make an untested password current and roll it out.
        raise RotationRequestInvalid(
            f"version {token} of secret {arn} has not passed testSecret: AWSCURRENT is not moved"
        )
    # None: no AWSCURRENT anywhere (the secret was re-labelled by hand): just attach it.
    current_version = next((v for v, labels in stages.items() if AWSCURRENT in labels), None)
    versions.move_current(arn, token, current_version)
    # Secrets Manager accepts AWSPENDING either on the new AWSCURRENT or nowhere; taking it
    # off makes the next rotation's start unambiguous (and moto insists on it).
    versions.drop_pending_label(arn, token)
    return "current_moved"
