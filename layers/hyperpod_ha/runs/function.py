"""AbandonedRunFunction and its settings: a run or drill that ended without finishing its
workflow gets its lease released and its incident opened; a restore of redundancy gets its lease
released (the restore's executions alarms tell people, and the next check finds what it left)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from hyperpod_ha.environment import Settings, Text
from hyperpod_ha.incidents import Incidents, IncidentSettings, OpenRequest
from hyperpod_ha.lease import lease_id_for_drill, lease_id_for_restore
from hyperpod_ha.observability import logger
from hyperpod_ha.own_executions import DescribedExecution, StepFunctionsExecutions
from hyperpod_ha.runs.abandoned import (
    AbandonedRun,
    AbandonedRunRejected,
    incident_reasons,
    is_drill,
    is_execution_of,
    needs_release_check,
    parse_abandoned_run,
)
from hyperpod_ha.runs.settings import VerificationRunsSettings
from hyperpod_ha.runs.verification_runs import VerificationRuns

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext


@dataclass(frozen=True)
class AbandonedRunFunctionSettings(Settings):
    """AbandonedRunFunction's environment."""

    verification: VerificationRunsSettings
    drill_state_machine_arn: Annotated[str, Text("DRILL_STATE_MACHINE_ARN", "")]
    # A restore holds the cluster's lease too (kind restore, its id from the execution's ARN).
    restore_state_machine_arn: Annotated[str, Text("RESTORE_STATE_MACHINE_ARN", "")]
    incidents: IncidentSettings
    # Only this cluster's runs are released (the template's Globals set it).
    cluster: Annotated[str, Text("CLUSTER_NAME")]


class ExecutionDescriptions(Protocol):
    def described(self, execution_arn: str) -> DescribedExecution | None: ...


class AbandonedRunFunction:
    def __init__(
        self,
        runs: VerificationRuns,
        incidents: Incidents,
        drill_state_machine_arn: str,
        cluster: str,
        restore_state_machine_arn: str,
        executions: ExecutionDescriptions,
    ) -> None:
        self._runs = runs
        self._incidents = incidents
        self._drill_state_machine_arn = drill_state_machine_arn
        self._restore_state_machine_arn = restore_state_machine_arn
        self._cluster = cluster
        self._executions = executions

    @classmethod
    def from_settings(cls, settings: AbandonedRunFunctionSettings) -> AbandonedRunFunction:
        import boto3

        incidents = Incidents.from_settings(settings.incidents)
        return cls(
            VerificationRuns.from_settings(settings.verification),
            incidents,
            settings.drill_state_machine_arn,
            settings.cluster,
            settings.restore_state_machine_arn,
            StepFunctionsExecutions(cache(lambda: boto3.client("stepfunctions"))),
        )

    def _described_run(self, event: Mapping[str, Any]) -> AbandonedRun:
        """The run the event names, as Step Functions describes its execution: the event gives
        only which execution; its status, state machine and input (the lease id released, the
        reason told) are DescribeExecution's. A forged event (a direct invoke) naming a running
        run, or giving another input, would release that run's lease or tell its own text."""
        machines = (
            self._runs.state_machine_arn,
            self._drill_state_machine_arn,
            self._restore_state_machine_arn,
        )
        named = parse_abandoned_run(event, machines, self._cluster)
        found = self._executions.described(named.execution_arn)
        if found is None:
            raise AbandonedRunRejected("Step Functions knows no such execution")
        described = {
            **event["detail"],
            "status": found.status,
            "stateMachineArn": found.state_machine_arn,
            "input": found.input,
        }
        return parse_abandoned_run({**event, "detail": described}, machines, self._cluster)

    def handle(self, event: Mapping[str, Any], context: LambdaContext) -> dict[str, Any]:
        try:
            run = self._described_run(event)
        except AbandonedRunRejected as error:
            # The rule only sends these; anything else is logged and dropped, never retried.
            event_id = event.get("id") if isinstance(event, Mapping) else None
            logger.warning("event ignored", extra={"event_id": str(event_id)[:256], "reason": str(error)})
            return {"outcome": "ignored", "reason": str(error)}
        if is_execution_of(run, self._restore_state_machine_arn):
            return self._restore_ended(run)
        drill = is_drill(run, self._drill_state_machine_arn)
        # A drill's lease id comes from its execution, not from its input.
        lease_id = lease_id_for_drill(run.execution_arn) if drill else run.lease_id
        released = self._runs.release(run.cluster, lease_id) if lease_id else False
        if needs_release_check(run) and not released:
            # A verdict's FAILED: the run released its lease and opened its incident itself.
            logger.info("failed run cleaned up after itself", extra={"execution_arn": run.execution_arn})
            return {"outcome": "ignored", "reason": "the run released its lease itself"}
        where = self._incidents.settings
        kind, reasons = incident_reasons(run, drill=drill, region=where.region, stack_name=where.stack_name)
        opened = self._incidents.open(
            OpenRequest(
                cluster=run.cluster,
                verdict="UNKNOWN",
                kind=kind,
                execution_id=run.execution_arn,
                reasons=reasons,
                run_start=run.run_start,
            )
        )
        logger.warning(
            "abandoned run handled",
            extra={"execution_arn": run.execution_arn, "status": run.status, "lease_released": released},
        )
        return {"outcome": "handled", "lease_released": released, "ops_item_id": opened.ops_item_id}

    def _restore_ended(self, run: AbandonedRun) -> dict[str, Any]:
        """Free the cluster of a restore that ended holding it, only while that execution holds
        it (conditional on its lease id): a run, drill or restore since is never released. No
        incident: the restore's executions alarm tells people, and the next check (a trigger,
        the watchdog) finds the controllers as the restore left them."""
        released = self._runs.release(run.cluster, lease_id_for_restore(run.execution_arn))
        if not released:
            logger.info("ended restore held no lease", extra={"execution_arn": run.execution_arn})
            return {"outcome": "ignored", "reason": "the restore held the cluster's lease no more"}
        logger.warning(
            "abandoned restore's lease released",
            extra={"execution_arn": run.execution_arn, "status": run.status},
        )
        return {"outcome": "released", "lease_released": True}
