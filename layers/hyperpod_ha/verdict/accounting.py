"""Accounting: slurmdbd answers, and has the active controller registered (its ControlHost)."""

from __future__ import annotations

from typing import Final

from hyperpod_ha.verdict.observation import Findings, Observation, ObservedController
from hyperpod_ha.verdict.reasons import ReasonCode

# The reason a verdict gives when slurmdbd answers but names no controller.
NO_REGISTERED_CONTROLLER: Final = "no controller is registered with slurmdbd (ControlHost empty)"


def accounting_findings(seen: Observation, active: ObservedController) -> Findings:
    found = Findings()
    views = [(r, r.dbd) for r in seen.checked]
    down = [(r, d) for r, d in views if d.reachable is False]
    if down:
        where = ", ".join(seen.label(r) for r, _ in down)
        error = down[0][1].error or "no answer"
        queue = active.checked.dbd.agent_queue_size if active.checked else None
        queued = f"; {queue} accounting records wait in slurmctld's DBD agent queue" if queue else ""
        # Whose: each controller asks its own slurmdbd (AccountingStorageHost=localhost on HyperPod).
        if len(down) == len([d for _, d in views if d.reachable is not None]):
            found.problem(
                ReasonCode.SLURMDBD_NOT_ANSWERING, f"slurmdbd does not answer from {where}: {error}{queued}"
            )
        else:
            found.problem(
                ReasonCode.SLURMDBD_NOT_ANSWERING, f"slurmdbd does not answer from {where}: {error}"
            )
    registered = next((d for r, d in views if d.reachable and r is active.checked), None) or next(
        (d for _, d in views if d.reachable), None
    )
    if registered is None:
        return found
    if registered.registered_host is None:
        found.problem(ReasonCode.SLURMDBD_NO_CONTROLLER, registered.error or NO_REGISTERED_CONTROLLER)
        return found
    holder = _controller_at(seen, registered.registered_host)
    if holder is None:
        found.note(
            ReasonCode.SLURMDBD_REGISTERED_HOST,
            f"slurmdbd has {registered.registered_host} registered as the controller",
        )
    elif holder is not active:
        found.problem(
            ReasonCode.SLURMDBD_OTHER_CONTROLLER,
            f"slurmdbd has {holder.key} ({registered.registered_host}) registered as the controller, "
            f"but {active.key} is active",
        )
    return found


def _controller_at(seen: Observation, host: str) -> ObservedController | None:
    for controller in seen.everyone:
        if controller.index is not None:
            configured = seen.hosts[controller.index] if controller.index < len(seen.hosts) else None
            if configured and host in (configured.name, configured.address):
                return controller
        report = controller.report
        if report is not None and (host == report.private_ip or host in report.node.addresses):
            return controller
    return None
