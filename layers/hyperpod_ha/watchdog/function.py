"""WatchdogFunction and its settings. A failed tick is never silent: a bad tick, a bad setting
or a failed check is logged with its reason, counted under a metric to alarm on, and raised (the
dead-letter queue keeps the tick). A scheduled function has no caller to tell, so a bad setting
is counted where it is read."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Final, Self

from botocore.exceptions import ClientError

from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.commands import InvalidCommandRequest
from hyperpod_ha.controllers.errors import ControllerGroupNotFound
from hyperpod_ha.controllers.settings import ProbeSettings
from hyperpod_ha.early_warning.settings import WarningThresholds
from hyperpod_ha.environment import Environment, Integer, OnOff, OptionalText, Settings, Text
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.observability import add_cluster_metric, logger, metrics
from hyperpod_ha.restore.settings import RestoreSettings
from hyperpod_ha.runs.settings import VerificationRunsSettings
from hyperpod_ha.verdict import VerdictPolicy
from hyperpod_ha.watchdog.scheduled_check import Watchdog
from hyperpod_ha.watchdog.tick import TickRejected, parse_tick

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

# What SageMaker answers for a cluster that is not there (CLUSTER_NAME is wrong).
_MISCONFIGURED_CODES = frozenset({"ResourceNotFound", "ResourceNotFoundException", "ValidationException"})
PROBE_DEADLINE_SECONDS: Final = 20.0  # the template's value for WatchdogFunction
# The template's RedundancyGraceMinutes: its default and bounds.
REDUNDANCY_GRACE_MINUTES: Final = 10
MAX_REDUNDANCY_GRACE_MINUTES: Final = 1440


def failure(error: Exception) -> tuple[str, str]:
    """The metric and the log message for an invocation that failed with ``error``."""
    if isinstance(error, TickRejected):
        return "WatchdogTicksRejected", "watchdog tick rejected"
    misconfigured = isinstance(error, ConfigurationError | InvalidCommandRequest | ControllerGroupNotFound)
    if misconfigured or (isinstance(error, ClientError) and error_code(error) in _MISCONFIGURED_CODES):
        return "WatchdogConfigurationErrors", "watchdog configuration is wrong"
    return "WatchdogFailures", "watchdog check failed"


@contextmanager
def failures_counted() -> Iterator[None]:
    """An error inside is logged and counted (:func:`failure`), then raised again."""
    try:
        yield
    except Exception as error:
        metric, message = failure(error)
        logger.error(message, extra={"error_type": type(error).__name__, "reason": str(error)[:500]})
        metrics.add_metric(name=metric, unit="Count", value=1)
        raise


@dataclass(frozen=True)
class WatchdogFunctionSettings(Settings):
    """WatchdogFunction's environment."""

    cluster: Annotated[str, Text("CLUSTER_NAME")]
    controller_group: Annotated[str, Text("CONTROLLER_GROUP")]
    probe: Annotated[ProbeSettings, ProbeSettings.with_defaults(deadline_seconds=PROBE_DEADLINE_SECONDS)]
    verification: VerificationRunsSettings
    # RestoreRedundancy and RestoreMaxPerHour, as the restore reads them: a verified tick with a
    # standby not ready starts a run when the restore would act (watchdog.restore_start).
    restore: RestoreSettings
    # How long no standby may be ready before the redundancy-lost incident opens (in seconds).
    redundancy_grace_seconds: Annotated[
        int,
        Integer(
            "REDUNDANCY_GRACE_MINUTES",
            REDUNDANCY_GRACE_MINUTES,
            minimum=0,
            maximum=MAX_REDUNDANCY_GRACE_MINUTES,
            scale=60,
        ),
    ] = REDUNDANCY_GRACE_MINUTES * 60
    # The early warnings' thresholds (controller-overloaded, accounting-at-risk).
    thresholds: WarningThresholds = field(default_factory=WarningThresholds)
    # EarlyWarningMetrics: off writes none of the figures' custom metrics (their cost), the warnings stay.
    early_warning_metrics: Annotated[bool, OnOff("EARLY_WARNING_METRICS", "on")] = True
    # IncidentFunction, which opens and resolves redundancy-lost; without it nothing is opened.
    incident_function_arn: Annotated[str | None, OptionalText("INCIDENT_FUNCTION_ARN")] = None
    # The restore's Session document: named in the reasons' command only.
    restore_document: Annotated[str | None, OptionalText("RESTORE_DOCUMENT")] = None
    # The verdict's policy (SLURM_TRIGGERS: missing Slurm triggers are drift, and installed).
    policy: VerdictPolicy = field(default_factory=VerdictPolicy)
    # SlurmTriggers=on: the document that installs them, and the topic their program publishes to.
    slurm_triggers_document: Annotated[str | None, OptionalText("SLURM_TRIGGERS_DOCUMENT")] = None
    failover_topic_arn: Annotated[str | None, OptionalText("SLURM_FAILOVER_TOPIC_ARN")] = None

    @classmethod
    def from_environment(cls, env: Environment | None = None) -> Self:
        with failures_counted():
            settings = super().from_environment(env)
            if settings.policy.slurm_triggers and not (
                settings.slurm_triggers_document and settings.failover_topic_arn
            ):
                raise ConfigurationError(
                    "SLURM_TRIGGERS is on without SLURM_TRIGGERS_DOCUMENT and SLURM_FAILOVER_TOPIC_ARN"
                )
            return settings


@dataclass(frozen=True)
class WatchdogFunction:
    watchdog: Watchdog

    @classmethod
    def from_settings(cls, settings: WatchdogFunctionSettings) -> WatchdogFunction:
        with failures_counted():
            return cls(_watchdog(settings))

    def handle(self, event: object, context: LambdaContext) -> dict[str, Any]:
        with failures_counted():
            tick = parse_tick(event)
            result = self.watchdog.tick(tick)
        if result.outcome != "verified" and not result.restore:  # a run for a restore: verified
            metrics.add_metric(name="WatchdogNotVerified", unit="Count", value=1)
        if result.verdict.redundancy != "unknown":
            add_cluster_metric("ReadyStandbys", len(result.verdict.standbys), self.watchdog.cluster)
        triggers = result.slurm_triggers or {}
        if triggers.get("installed"):
            add_cluster_metric("SlurmTriggersInstalled", triggers["installed"], self.watchdog.cluster)
        if triggers.get("outcome") == "failed":
            metrics.add_metric(name="SlurmTriggerInstallsFailed", unit="Count", value=1)
        # A gauge: the failed publishes of the ON/OFF program within the last hour, at each tick.
        add_cluster_metric(
            "ControllerNotificationsFailed", result.verdict.missed_notifications, self.watchdog.cluster
        )
        logger.info("watchdog tick", extra={"tick_id": tick.id, **result.to_json()})
        return result.to_json()


def _watchdog(settings: WatchdogFunctionSettings) -> Watchdog:
    import time

    import boto3

    from hyperpod_ha import state_table
    from hyperpod_ha.commands import runner_for
    from hyperpod_ha.controllers.check import check_controller
    from hyperpod_ha.controllers.discovery import discover_controllers
    from hyperpod_ha.controllers.models import Controller, ControllerReport
    from hyperpod_ha.early_warning.watch import EarlyWarningWatch
    from hyperpod_ha.runs.verification_runs import VerificationRuns
    from hyperpod_ha.silences import Silences
    from hyperpod_ha.watchdog.found_failures import FoundFailures
    from hyperpod_ha.watchdog.redundancy_loss import RedundancyWatch
    from hyperpod_ha.watchdog.restore_start import RestoreStart
    from hyperpod_ha.watchdog.unreachable_nodes import UnreachableNodes

    runner = runner_for(settings.probe.transport)
    dynamodb = boto3.client("dynamodb")
    sagemaker = boto3.client("sagemaker")
    runs = VerificationRuns.from_settings(settings.verification, dynamodb)

    def check(node: Controller) -> ControllerReport:
        return check_controller(
            node,
            runner,
            document=settings.probe.document,
            deadline_seconds=settings.probe.deadline_seconds,
        )

    redundancy = None
    ask = None
    if settings.incident_function_arn:
        from hyperpod_ha.ingestion.database_incidents import IncidentFunctionClient

        incidents = IncidentFunctionClient(boto3.client("lambda"), settings.incident_function_arn)
        ask = incidents.ask
        redundancy = RedundancyWatch(
            settings.cluster,
            dynamodb,
            settings.verification.state_table,
            incidents.ask,
            settings.redundancy_grace_seconds,
        )
    else:
        logger.warning("INCIDENT_FUNCTION_ARN not set: no redundancy-lost incident is opened")
    table = settings.verification.state_table
    silences = Silences(dynamodb, table)

    def silenced() -> str | None:
        silence = silences.in_force(settings.cluster)
        return None if silence is None else silence.describe()

    triggers = None
    if settings.policy.slurm_triggers and settings.slurm_triggers_document and settings.failover_topic_arn:
        from hyperpod_ha.watchdog.trigger_install import TriggerInstall

        triggers = TriggerInstall(
            runner,
            settings.slurm_triggers_document,
            settings.failover_topic_arn,
            lambda: state_table.read_lease(dynamodb, table, settings.cluster),
            silenced,
        )
    restore = RestoreStart(
        settings.restore,
        settings.restore_document or "<RestoreSlurmctldDocument>",
        lambda hour: state_table.restore_actions(dynamodb, table, settings.cluster, hour),
        lambda: state_table.read_lease(dynamodb, table, settings.cluster),
        settings.cluster,
        silenced,
    )
    return Watchdog(
        settings.cluster,
        lambda: discover_controllers(sagemaker, settings.cluster, settings.controller_group),
        check,
        runs,
        FoundFailures(dynamodb, settings.verification.state_table),
        time.time,
        redundancy=redundancy,
        unreachable=UnreachableNodes(settings.cluster, dynamodb, settings.verification.state_table),
        restore=restore,
        early_warning=EarlyWarningWatch(settings.cluster, dynamodb, table, ask, settings.thresholds),
        figure_metrics=settings.early_warning_metrics,
        policy=settings.policy,
        triggers=triggers,
    )
