"""The watchdog: a scheduled check of every controller, for failures that send no event.

HyperPod's node health events cover GPU and Trainium instances only, cluster events need
continuous provisioning, and the ON/OFF programs that publish to SNS live on FSx: a cluster can
go down with no trigger at all. On each tick the watchdog runs the same probe as the workflow on
every controller, at once, and decides the verdict with the same rules. Verified with every
standby ready: nothing else happens (no Standard workflow execution). Not verified: the
verification workflow is started through the cluster's lease like any other trigger, so one run
and one incident follow. The watchdog remembers that; its first verified tick afterwards starts
one more run, whose verified verdict resolves the incident even when the recovery published
nothing either (a tick that only joins a run still going keeps that memory: the run it joined
was started before the recovery and may yet end on the failure). Verified with a standby not
ready: a run starts too when ``RestoreRedundancy`` is not ``off`` and the restore's planner
would act now (:mod:`.restore_start`), so that its verdict starts the restore. Each tick first
records since when each controller has been unreachable through SSM (:mod:`.unreachable_nodes`:
the restore's reboot waits on it). Whatever the verdict, the tick then weighs the cluster's
redundancy (:mod:`.redundancy_loss`): no ready standby for ``RedundancyGraceMinutes`` opens the
``redundancy-lost`` incident. With ``SlurmTriggers=on``, a tick that finds Slurm's triggers (or
their program on a controller) missing installs them before it acts on the verdict, and judges
again from what the install left (:mod:`.trigger_install`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from botocore.exceptions import ClientError

from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.controllers.models import ClusterControllers, Controller, ControllerReport
from hyperpod_ha.early_warning.metrics import emit_figures
from hyperpod_ha.early_warning.watch import EarlyWarningWatch
from hyperpod_ha.observability import logger
from hyperpod_ha.runs.verification_runs import VerificationRuns
from hyperpod_ha.trigger import Trigger
from hyperpod_ha.verdict import Verdict, VerdictPolicy, evaluate
from hyperpod_ha.watchdog.controller_checks import check_every_controller
from hyperpod_ha.watchdog.found_failures import FoundFailures
from hyperpod_ha.watchdog.redundancy_loss import RedundancyWatch
from hyperpod_ha.watchdog.restore_start import RestoreStart
from hyperpod_ha.watchdog.tick import Tick, TickResult
from hyperpod_ha.watchdog.trigger_install import TriggerInstall, TriggerStep
from hyperpod_ha.watchdog.unreachable_nodes import UnreachableNodes


@dataclass(frozen=True)
class Watchdog:
    cluster: str
    discover: Callable[[], ClusterControllers]
    check: Callable[[Controller], ControllerReport]
    runs: VerificationRuns
    found: FoundFailures
    clock: Callable[[], float]
    policy: VerdictPolicy = field(default_factory=VerdictPolicy)
    redundancy: RedundancyWatch | None = None
    unreachable: UnreachableNodes | None = None
    restore: RestoreStart | None = None
    early_warning: EarlyWarningWatch | None = None
    # The figures as custom metrics (EarlyWarningMetrics); off: weighed and kept, never written.
    figure_metrics: bool = True
    # SlurmTriggers=on: missing Slurm triggers are installed before the verdict is acted on.
    triggers: TriggerInstall | None = None

    def tick(self, tick: Tick) -> TickResult:
        cluster = self.discover()
        reports = check_every_controller(cluster, self.check)
        strategy = cluster.accounting.config_strategy
        verdict = evaluate(reports, self.policy, config_strategy=strategy)
        installed = self._install_triggers(verdict, reports)
        if installed is not None and installed.mended is not None:
            # Judged again from what the install left: a drift it mended starts no run.
            reports = list(installed.mended)
            verdict = evaluate(reports, self.policy, config_strategy=strategy)
        since = self._note_unreachable(reports)
        result = self._verification(tick, verdict, reports, cluster, since)
        result = replace(
            result, unreachable=since, slurm_triggers=installed.to_json() if installed is not None else None
        )
        # After the verification's own step: a failure here still leaves that run started.
        if self.redundancy is not None:
            result = replace(result, redundancy_step=self.redundancy.check(tick, verdict, self.clock()))
        return replace(result, early_warnings=self._warn(tick, verdict, reports))

    def _warn(
        self, tick: Tick, verdict: Verdict, reports: Sequence[ControllerReport]
    ) -> Mapping[str, Any] | None:
        """The early warnings and (with ``figure_metrics``) the figures as metrics; never what
        stops a tick: a failure is logged, and the next tick compares with the last sample kept."""
        if self.early_warning is None:
            return None
        try:
            outcome = self.early_warning.check(tick, verdict, reports, self.clock())
        except ClientError as error:
            logger.warning(
                "early warnings not weighed",
                extra={"error_code": error_code(error), "reason": str(error)[:300]},
            )
            return None
        if self.figure_metrics:
            emit_figures(self.cluster, outcome.figures)
        return outcome.to_json()

    def _verification(
        self,
        tick: Tick,
        verdict: Verdict,
        reports: Sequence[ControllerReport],
        cluster: ClusterControllers,
        unreachable_since: Mapping[str, int],
    ) -> TickResult:
        if verdict.verified:
            if not self.found.pending(self.cluster):
                return self._restore(tick, verdict, reports, cluster, unreachable_since)
            # Recovered: a verified run is what resolves the incident the failure opened.
            reason = f"watchdog: {verdict.name.value} again after a failure it found"
            decision = self.runs.start_or_join(self.cluster, self._trigger(tick, verdict), reason)
            # Joined: the run was started before the recovery and may still end on the failure it
            # saw (and open the incident then); the next verified tick tries again.
            if decision.outcome != "joined":
                self.found.forget(self.cluster)
            return TickResult(decision.outcome, verdict, len(reports), decision.execution_arn, recovery=True)
        decision = self.runs.start_or_join(
            self.cluster, self._trigger(tick, verdict), _reason(verdict, reports)
        )
        self.found.remember(self.cluster, tick, verdict.name.value, self.clock())
        return TickResult(decision.outcome, verdict, len(reports), decision.execution_arn)

    def _restore(
        self,
        tick: Tick,
        verdict: Verdict,
        reports: Sequence[ControllerReport],
        cluster: ClusterControllers,
        unreachable_since: Mapping[str, int],
    ) -> TickResult:
        """Verified: a run only when a restore would act on a standby not ready."""
        weighed = None
        if self.restore is not None:
            weighed = self.restore.weigh(
                verdict,
                reports,
                cluster.maintenance,
                self.clock(),
                self.policy,
                unreachable_since=unreachable_since,
                cluster_id=cluster.cluster_id,
            )
        if weighed is None or not weighed.start:
            why = None if weighed is None else weighed.reason
            return TickResult("verified", verdict, len(reports), restore_reason=why)
        reason = f"watchdog: {verdict.name.value} with redundancy {verdict.redundancy}: {weighed.reason}"
        decision = self.runs.start_or_join(self.cluster, self._trigger(tick, verdict), reason)
        return TickResult(
            decision.outcome,
            verdict,
            len(reports),
            decision.execution_arn,
            restore=True,
            restore_reason=weighed.reason,
        )

    def _install_triggers(self, verdict: Verdict, reports: Sequence[ControllerReport]) -> TriggerStep | None:
        """The Slurm triggers installed where missing; a failure is told, never what stops a tick."""
        if self.triggers is None:
            return None
        try:
            step = self.triggers.check(verdict, reports, self.clock(), self.policy)
        except ClientError as error:
            step = TriggerStep("failed", f"not installed: {error_code(error)}: {str(error)[:200]}")
        if step.outcome in ("installed", "failed"):
            log = logger.info if step.outcome == "installed" else logger.warning
            log("slurm triggers", extra=step.to_json())
        return step

    def _note_unreachable(self, reports: Sequence[ControllerReport]) -> Mapping[str, int]:
        """The record for the restore's reboot; a failure to keep it never stops the tick's run."""
        if self.unreachable is None:
            return {}
        try:
            return self.unreachable.note(reports, self.clock())
        except ClientError as error:
            logger.warning(
                "unreachable record not kept",
                extra={"error_code": error_code(error), "reason": str(error)[:300]},
            )
            return {}

    @staticmethod
    def _trigger(tick: Tick, verdict: Verdict) -> Trigger:
        return Trigger(
            source="watchdog",
            id=tick.id,
            summary={"verdict": verdict.name.value, "reasons": verdict.texts[:3]},
            time=tick.scheduled_time,
        )


def _reason(verdict: Verdict, reports: Sequence[ControllerReport]) -> str:
    first = verdict.texts[0] if verdict.reasons else f"{len(reports)} controllers checked"
    return f"watchdog: {verdict.name.value} ({first[:200]})"
