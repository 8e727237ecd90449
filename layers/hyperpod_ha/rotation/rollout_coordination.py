"""A roll-out as the function runs it: which controllers, the roll-out itself
(:mod:`.rollout`), the incident when a controller fails, and the record of it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hyperpod_ha.observability import logger, metrics
from hyperpod_ha.rotation.collaborators import Collaborators
from hyperpod_ha.rotation.controller_order import check_given, given_controllers, running_first
from hyperpod_ha.rotation.rollout import FailureHandler, RolloutReport, RolloutSettings, roll_out


class RolloutCoordinator:
    def __init__(
        self,
        cluster: str,
        controller_group: str,
        rollout_settings: Callable[[str], RolloutSettings],  # for a secret's ARN
        collaborators: Collaborators,
    ) -> None:
        self._cluster = cluster
        self._group = controller_group
        self._rollout_settings = rollout_settings
        self._with = collaborators

    def controllers(self, given: object = None) -> list[dict[str, Any]]:
        """The discovered controllers the event names, else all of the cluster's, running ones first."""
        if given is not None:
            check_given(given)  # before any call
        found = self._with.discover(self._cluster, self._group)
        if given is not None:
            return given_controllers(given, found.controllers)
        return running_first(found.controllers)

    def roll_out(self, secret_arn: str, controllers: list[dict[str, Any]]) -> RolloutReport:
        report = roll_out(
            controllers, self._with.runner(), self._rollout_settings(secret_arn), self._reporter(secret_arn)
        )
        self._record(secret_arn, report)
        return report

    def _reporter(self, secret_arn: str) -> FailureHandler:
        def report_rollout_failure(controller: dict[str, Any], reason: str) -> None:
            """The controller kept its old slurmdbd.conf: one incident."""
            # Imported here: only a failed roll-out needs it, not every rotation's cold start.
            from hyperpod_ha.rotation.rollout_incident import rollout_failed

            logger.error(
                "slurmdbd credentials roll-out failed: roll out again once the controller is fixed",
                extra={
                    "instance_id": controller.get("instance_id")
                    or controller.get("target")
                    or "a controller",
                    "target": controller.get("target"),
                    "reason": reason,
                },
            )
            request = rollout_failed(self._cluster, secret_arn, controller, reason)
            self._with.incidents().open(request)

        return report_rollout_failure

    def _record(self, secret_arn: str, report: RolloutReport) -> None:
        """Per controller for the dashboard; the last roll-out for `hyperpod-ha status`."""
        for outcome in ("updated", "failed"):
            count = sum(1 for c in report.controllers if c.outcome == outcome)
            metrics.add_metric(name=f"RolloutControllers{outcome.capitalize()}", unit="Count", value=count)
        metrics.flush_metrics()  # the rotation's other steps emit nothing
        records = self._with.records()
        if records is not None:
            records.put(self._cluster, "rotation", {"secret_arn": secret_arn, **report.to_json()})
