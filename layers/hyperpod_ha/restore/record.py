"""The restore on record: what it did, in the status record (``hyperpod-ha status``), in one
``restore-action`` notice on the topic and in the note for the open incident (IncidentFunction's
``note``, the state machine's next step); whether a verification follows (only after an action)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from hyperpod_ha.restore.context import own_execution, request_of
from hyperpod_ha.restore.errors import InvalidRestoreRequest
from hyperpod_ha.topic_messages import TopicMessage, message
from hyperpod_ha.topic_messages.sections import facts, reason_lines

if TYPE_CHECKING:
    from hyperpod_ha.restore.context import RestoreContext

KIND: Final = "restore-action"
_MAX_RESULTS: Final = 10
_TEXT: Final = 400
# The same name as hyperpod_ha.incidents.keys.KIND_REDUNDANCY_LOST, and IncidentFunction's bound
# on a note's lines (incidents.models.MAX_NOTE_LINES): the restore does not import the incidents
# feature; a unit test keeps them equal.
KIND_REDUNDANCY_LOST: Final = "redundancy-lost"
MAX_NOTE_LINES: Final = 32


def finish(event: Mapping[str, Any], context: RestoreContext) -> dict[str, Any]:
    """The restore's record, notice and note, only inside this stack's running restore: each is
    made of the request's content (a forged one would write what `hyperpod-ha status` prints)."""
    request = request_of(event, context)
    execution_id = own_execution(event, context, "nothing is recorded: ")
    plan = event.get("plan")
    if not isinstance(plan, Mapping):
        raise InvalidRestoreRequest("finish needs the plan")
    results = _results(event.get("results"))
    record = {
        "mode": request.mode.value,
        "dry_run": request.dry_run,
        "verdict": plan.get("verdict"),
        "active_controller": plan.get("active_controller"),
        "blocked": plan.get("blocked"),
        "stopped": plan.get("stopped"),
        "reasons": [str(r)[:_TEXT] for r in plan.get("reasons") or []][:24],
        "actions": results,
        "not_taken": [
            {"controller": a.get("controller"), "kind": a.get("kind"), "command": a.get("command")}
            for a in (plan.get("not_taken") or [])[:_MAX_RESULTS]
            if isinstance(a, Mapping)
        ],
        "execution_id": _text(execution_id),
    }
    context.status.put(request.cluster, "restore", record)
    message_id = None
    silenced = None
    if results or record["stopped"] or record["not_taken"]:
        # The operator's silence, read as it would tell: nothing is published in it.
        silenced = context.items.silenced()
        if silenced is None:
            message_id = context.topic.notify(restore_notice(request.cluster, record))
    # The open incident also hears why a restore was blocked; a dry run changes nothing there.
    noted = results or record["stopped"] or record["not_taken"] or record["blocked"]
    note = incident_note(record) if noted and not request.dry_run else None
    return {
        "verify": bool(results),
        "restored": [r["controller"] for r in results if r["restored"]],
        "not_restored": [r["controller"] for r in results if not r["restored"]],
        "message_id": message_id,
        "note": note,
        "silenced": silenced,
    }


def incident_note(record: Mapping[str, Any]) -> dict[str, Any]:
    """What goes on the open incident (``redundancy-lost``, or the verdict's that started the
    restore): each action and its outcome, that restoring stopped and why, what is left to a person."""
    verdict = record.get("verdict")
    kinds = [KIND_REDUNDANCY_LOST]
    if isinstance(verdict, str) and verdict and verdict != KIND_REDUNDANCY_LOST:
        kinds.append(verdict[:64])
    mode = f"RestoreRedundancy={record.get('mode')}" + (" (dry run)" if record.get("dry_run") else "")
    lines = [f"restore {mode}: verdict {verdict or '-'}, active {record.get('active_controller') or '-'}"]
    results: Sequence[Mapping[str, Any]] = record.get("actions") or []
    lines += [
        f"{r['controller']}: {r.get('kind')}: {'restored' if r.get('restored') else 'NOT restored'}"
        f" ({r.get('what') or 'no detail'})"
        for r in results
    ]
    lines += [str(record[name]) for name in ("stopped", "blocked") if record.get(name)]
    left = [*(record.get("not_taken") or []), *(r for r in results if not r.get("restored"))]
    lines += [f"{a['controller']}: by hand: {a['command']}" for a in left if a.get("command")]
    return {"kinds": kinds, "lines": lines[:MAX_NOTE_LINES]}


def _text(value: object) -> str | None:
    return value[:_TEXT] if isinstance(value, str) else None


def _results(value: object) -> list[dict[str, Any]]:
    """The Map's outcome per action: controller, kind, restored, what it saw last."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidRestoreRequest("results is not a list")
    kept = []
    for item in value[:_MAX_RESULTS]:
        if not isinstance(item, Mapping) or not isinstance(item.get("controller"), str):
            raise InvalidRestoreRequest("a result names no controller")
        kept.append(
            {
                "controller": item["controller"][:_TEXT],
                "kind": _text(item.get("kind")),
                "restored": item.get("restored") is True,
                "what": _text(item.get("what")) or _text(item.get("error")),
                "command": _text(item.get("command")),
            }
        )
    return kept


def restore_notice(cluster: str, record: Mapping[str, Any]) -> TopicMessage:
    """One notice per restore that acted, stopped or left an action to a person."""
    results: Sequence[Mapping[str, Any]] = record.get("actions") or []
    restored = [r["controller"] for r in results if r.get("restored")]
    failed = [r for r in results if not r.get("restored")]
    if failed or record.get("stopped"):
        what = "redundancy not restored" if not restored else "redundancy partly restored"
        severity = "3"
    elif restored:
        what = f"redundancy restored: slurmctld started on {', '.join(restored)}"
        severity = "4"
    else:
        what = "redundancy not restored (RestoreRedundancy leaves it to you)"
        severity = "4"
    lines: list[Any] = facts(
        [
            ("Cluster", cluster),
            (
                "Mode",
                f"RestoreRedundancy={record.get('mode')}" + (" (dry run)" if record.get("dry_run") else ""),
            ),
            ("Verdict", str(record.get("verdict") or "")),
            ("Active", str(record.get("active_controller") or "")),
        ]
    )
    actions = [
        f"{r['controller']}: {r.get('kind')}: {'restored' if r.get('restored') else 'NOT restored'}"
        f" ({r.get('what') or 'no detail'})"
        for r in results
    ]
    lines += ["", *reason_lines("What the restore did:", actions or ["nothing was started"])]
    lines += ["", *reason_lines("Why:", list(record.get("reasons") or []))]
    by_hand = [
        f"{a['controller']}: {a['command']}" for a in record.get("not_taken") or [] if a.get("command")
    ]
    by_hand += [f"{r['controller']}: {r['command']}" for r in failed if r.get("command")]
    if by_hand:
        lines += [
            "",
            *reason_lines(
                "To restore it by hand (the stack's Session document, or a node's reboot):", by_hand
            ),
        ]
    lines += ["", "A verification run follows every restore that started slurmctld or rebooted a node."]
    return message(cluster=cluster, kind=KIND, event="notice", what=what, body=lines, severity=severity)
