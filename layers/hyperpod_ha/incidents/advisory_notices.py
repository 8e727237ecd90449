"""The notice that a cluster runs a known-bad Slurm release (:mod:`hyperpod_ha.slurm.advisories`):
severity 4, never a page, once per advisory, release set and cluster. The verdict and ``hyperpod-ha
status`` name the advisory at every run; this notice tells people once, when a run first sees the
release (again after :data:`REMIND_SECONDS`, when the cluster still runs it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from hyperpod_ha.request_fields import bounded_text
from hyperpod_ha.topic_messages import TopicMessage, kinds, message
from hyperpod_ha.topic_messages.sections import facts, next_steps

KIND: Final = "slurm-advisory"
# A marker per advisory and release set: the notice again after a year on the same release.
REMIND_SECONDS: Final = 366 * 24 * 3600
_MAX_EVENT_ID: Final = 200


def advisory_event_id(row: Mapping[str, Any]) -> str:
    """``advisory#<key>#<release>+<release>``: one notice per advisory and the releases it applies
    to (an upgrade to another affected release is told again)."""
    releases = "+".join(sorted(str(r) for r in row.get("releases") or ()))
    return f"advisory#{row['advisory']}#{releases}"[:_MAX_EVENT_ID]


def advisory_notice(cluster: str, region: str, row: Mapping[str, Any]) -> TopicMessage:
    """The notice of one advisory row as the verdict's status record keeps it
    (:func:`hyperpod_ha.status_records.advisories_record`: every field already bounded)."""
    releases = _listed(row.get("releases"))
    controllers = _listed(row.get("controllers"))
    fixed = _listed(row.get("fixed_in"))
    body: list[str] = [
        f"HyperPod cluster {cluster} runs Slurm {releases}, which a known defect or security advisory "
        "affects. Nothing is down: this notice is sent once per advisory and release.",
        "",
        *facts(
            [
                ("Cluster", cluster),
                ("Advisory", str(row["advisory"])),
                ("What", str(row.get("what") or "(not said)")),
                ("Running", f"{releases} on {controllers}"),
                ("Fixed in", fixed),
            ]
        ),
        "",
        "Sources:",
        *(f"  {source}" for source in _sources(row.get("sources"))),
        "",
        *next_steps(cluster, region, (), kinds.kind(KIND).look_at, [], diagnose=False),
    ]
    return message(
        cluster=cluster,
        kind=KIND,
        event="notice",
        what=f"Slurm {releases}: {row['advisory']}",
        body=body,
        problem=f"{KIND}:{row['advisory']}",
    )


def _listed(values: object) -> str:
    return ", ".join(_sources(values)) or "(not known)"


def _sources(values: object) -> list[str]:
    return [bounded_text(str(v)) for v in values] if isinstance(values, list) else []
