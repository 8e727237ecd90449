"""Since when each controller has been unreachable through SSM while its node is Running: the
record the restore's ``reboot-node`` waits on (``RestoreRedundancy=all``,
``RestoreUnreachableMinutes``), under ``unreachable#<cluster>``.

Kept by the watchdog's ticks and nowhere else: only the watchdog checks every controller at a
steady rate, so only its ticks can tell how long a node has been unreachable (a verification run
comes only with a trigger, and a dead standby sends none). The restore's plan step only reads
it. The first tick that sees a controller unreachable writes ``now`` (a conditional write: of
two ticks at once the first time holds); the first that reaches it again, or no longer finds it
Running, forgets it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from hyperpod_ha import state_table
from hyperpod_ha.controllers.models import ControllerReport, ReportStatus

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# The item's TTL after its last new node: longer than the longest RestoreUnreachableMinutes.
_KEPT_SECONDS: Final = 14 * 86_400


def unreachable_nodes(reports: Sequence[ControllerReport]) -> set[str]:
    """Instance ids SSM could not reach; a node not Running is ``NOT_RUNNING``, never here."""
    return {report.instance_id for report in reports if report.status is ReportStatus.UNREACHABLE}


@dataclass(frozen=True)
class UnreachableNodes:
    cluster: str
    dynamodb: DynamoDBClient
    table: str

    def note(self, reports: Sequence[ControllerReport], now: float) -> dict[str, int]:
        """Record this tick's reports; since when each unreachable node has been unreachable. A
        record no tick wrote for a while (the watchdog was off) is forgotten first: its nodes
        may have recovered unseen, so their wait starts again now."""
        kept, ticked_at = state_table.read_unreachable(self.dynamodb, self.table, self.cluster)
        forget_all = state_table.unreachable_stale(ticked_at, now)
        unreached = unreachable_nodes(reports)
        for node, when in kept.items():
            if forget_all or node not in unreached:
                state_table.forget_unreachable(self.dynamodb, self.table, self.cluster, node, when)
        # Written on every tick (the first time is kept): the restore believes a fresh record only.
        return {
            node: state_table.mark_unreachable(
                self.dynamodb, self.table, self.cluster, node, int(now), int(now) + _KEPT_SECONDS
            )
            for node in sorted(unreached)
        }
