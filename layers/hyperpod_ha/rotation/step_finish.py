"""``finishSecret``: AWSCURRENT moves to the token's version and AWSPENDING is taken off it."""

from __future__ import annotations

from hyperpod_ha.rotation.secret import AWSCURRENT
from hyperpod_ha.rotation.versions import SecretVersions, Stages


def finish_secret(versions: SecretVersions, arn: str, token: str, stages: Stages) -> str:
    # None: no AWSCURRENT anywhere (the secret was re-labelled by hand): just attach it.
    current_version = next((v for v, labels in stages.items() if AWSCURRENT in labels), None)
    versions.move_current(arn, token, current_version)
    # Secrets Manager accepts AWSPENDING either on the new AWSCURRENT or nowhere; taking it
    # off makes the next rotation's start unambiguous (and moto insists on it).
    versions.drop_pending_label(arn, token)
    return "current_moved"
