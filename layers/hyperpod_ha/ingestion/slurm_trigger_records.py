"""What one Slurm trigger message asks for (:mod:`hyperpod_ha.slurm.triggers`): the cluster's
verification run, started or joined, with the trigger as its ``slurm-trigger`` trigger; and for
an event whose effect is ``accounting`` (slurmctld's accounting buffer full) the cluster's
accounting incident too, at once, through IncidentFunction.

The run is started first: it is what finds out which controller the event is about (Slurm does
not tell the program which standby died). The incident is the watchdog's ``accounting-at-risk``
kind, one open OpsItem per cluster: an open from here on top of the watchdog's warning finds the
same OpsItem. Records already dropped are lost whatever happens next, so a verified run does not
resolve it, and nor does the watchdog unless its own warning opened it: on-call resolves it in
OpsCenter once slurmdbd is back (docs/limitations.md)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from hyperpod_ha.human_time import utc_text
from hyperpod_ha.observability import logger
from hyperpod_ha.redaction import redact, scrub_text
from hyperpod_ha.runs.verification_runs import VerificationRuns
from hyperpod_ha.trigger import SLURM_TRIGGER, Trigger

if TYPE_CHECKING:
    from hyperpod_ha.slurm.triggers import TriggerMessage

# The same name as hyperpod_ha.incidents.keys.KIND_ACCOUNTING_AT_RISK (ingestion does not import
# the incidents feature; a unit test keeps the two equal).
KIND_ACCOUNTING_AT_RISK: Final = "accounting-at-risk"

OpenIncident = Callable[[dict[str, Any]], dict[str, Any]]


def slurm_trigger_trigger(message_id: str, message: TriggerMessage) -> Trigger:
    """The run's trigger: the SNS MessageId its id (every delivery of the message takes the same
    lease), the program's time its time (the run checks until SlurmctldTimeout + margin after it)."""
    return Trigger(
        source=SLURM_TRIGGER,
        id=message_id,
        summary={"event": message.event.name, "host": message.host, "at": message.at},
        time=utc_text(message.at),
    )


def run_reason(message: TriggerMessage) -> str:
    return f"Slurm's trigger {message.event.name} fired on {message.host} at {message.at}"


def buffer_full_request(
    cluster: str, message_id: str, message: TriggerMessage, execution_arn: str = ""
) -> dict[str, Any]:
    """IncidentFunction's ``open`` of the cluster's accounting incident for a full buffer.
    ``execution_arn``: the run the message started or joined, so the incident names the run
    that checks the controllers (every delivery of the message finds the same run, so the same
    Incident Manager token); without one, the message."""
    host = message.host
    reasons = [
        f"{run_reason(message)}: slurmctld's queue of accounting records for slurmdbd reached "
        "MaxDBDMsgs; it drops step records, then every new record, until slurmdbd takes them",
        "do not fail over now: the queue lives in the active slurmctld's memory, a takeover loses it",
        f"bring slurmdbd or its database back: `systemctl status slurmdbd` and its log; "
        f"`sdiag` on {host} shows the DBD agent queue",
        "records already dropped are lost: resolve this in OpsCenter once slurmdbd takes records again",
    ]
    return {
        "action": "open",
        "cluster": cluster,
        "kind": KIND_ACCOUNTING_AT_RISK,
        "verdict": "",
        "execution_id": execution_arn
        or f"{SLURM_TRIGGER}:{hashlib.sha256(message_id.encode()).hexdigest()[:32]}",
        "problem": scrub_text(f"slurmctld's accounting buffer is full on {host}: new records are dropped"),
        "reasons": [scrub_text(reason) for reason in reasons],
        "evidence": redact(
            {
                "slurm_trigger": {
                    "message_id": message_id,
                    "event": message.event.name,
                    "meaning": message.event.meaning,
                    "host": host,
                    "at": message.at,
                }
            }
        ),
        "trigger": slurm_trigger_trigger(message_id, message).to_json(),
        "run_reason": run_reason(message),
    }


def slurm_trigger_record(
    runs: VerificationRuns,
    cluster: str,
    message_id: str,
    message: TriggerMessage,
    open_incident: OpenIncident,
) -> dict[str, Any]:
    """Start or join the cluster's run; for an ``accounting`` event, then open the incident (a
    failure raises: the delivery is retried, the run's start answered again by its lease)."""
    decision = runs.start_or_join(cluster, slurm_trigger_trigger(message_id, message), run_reason(message))
    incident = None
    if message.event.effect == "accounting":
        answer = open_incident(buffer_full_request(cluster, message_id, message, decision.execution_arn))
        ops_item = answer.get("ops_item_id")
        incident = {
            "kind": KIND_ACCOUNTING_AT_RISK,
            # OpsCenter's id ("oi-" and 12 hex digits); None when a silence kept it from opening.
            "ops_item_id": ops_item if isinstance(ops_item, str) and len(ops_item) <= 64 else None,
        }
    logger.info(
        "slurm trigger handled",
        extra={
            "message_id": message_id,
            "event": message.event.name,
            "host": message.host,
            "outcome": decision.outcome,
            "execution_arn": decision.execution_arn,
            "incident": incident,
        },
    )
    return {
        "message_id": message_id,
        "outcome": decision.outcome,
        "source": SLURM_TRIGGER,
        "event": message.event.name,
        "host": message.host,
        "at": message.at,
        "execution_arn": decision.execution_arn,
        **({"incident": incident} if incident else {}),
    }
