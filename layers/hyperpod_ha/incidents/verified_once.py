"""The "verified" message once per execution, kept by Powertools idempotency (nothing in
OpsCenter records it). Powertools is imported here on first use: a large import that only
resolving needs."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hyperpod_ha.incidents.models import ResolveRequest
from hyperpod_ha.observability import logger

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig

    from hyperpod_ha.incidents.tracking import Incidents


def idempotency_config() -> IdempotencyConfig:
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig

    return IdempotencyConfig(event_key_jmespath="[cluster, execution_id]", raise_on_no_idempotency_key=True)


def announce_verified_once(
    incidents: Incidents, table: str | None, config: IdempotencyConfig
) -> Callable[[ResolveRequest], bool]:
    if not table:
        logger.warning("IDEMPOTENCY_TABLE not set: a retried resolve may repeat the 'verified' message")
        return incidents.announce_verified
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer, idempotent_function

    def announce(request: dict[str, Any]) -> dict[str, bool]:
        return {"notified": incidents.announce_verified(ResolveRequest.from_event(request))}

    once = idempotent_function(
        announce,
        data_keyword_argument="request",
        persistence_store=DynamoDBPersistenceLayer(table_name=table),
        config=config,
        key_prefix="hyperpod-ha.incident.verified",
    )

    def announce_once(request: ResolveRequest) -> bool:
        return bool(once(request=request.to_event())["notified"])

    return announce_once
