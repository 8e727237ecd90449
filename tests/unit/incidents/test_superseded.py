"""Issue 36: a run that handed the cluster to a restore before its snapshot decides its incident
after it; when the run the restore started has decided since (its verdict recorded, that run
started later), the later decision stands and the earlier run's open or resolve does nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import pytest

from hyperpod_ha.incidents.function import IncidentFunction
from hyperpod_ha.incidents.tracking import Incidents
from hyperpod_ha.status_records import StatusRecords

FIRST = "arn:aws:states:us-east-1:123456789012:execution:verify:first"
LATER = "arn:aws:states:us-east-1:123456789012:execution:verify:later"
RESTORE = "arn:aws:states:us-east-1:123456789012:execution:restore:r1"


@dataclass
class Recorded:
    """The status records as the function reads them: the last verdict's record."""

    verdict: dict[str, Any] | None

    def read_one(self, cluster: str, kind: str) -> dict[str, Any] | None:
        assert (cluster, kind) == ("ml-cluster", "verdict")
        return self.verdict


class NoIncidents:
    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a superseded decision touches no incident ({name})")


def function(verdict: dict[str, Any] | None) -> IncidentFunction:
    status = cast(StatusRecords, Recorded(verdict))
    return IncidentFunction(cast(Incidents, NoIncidents()), None, status, "ml-cluster")


def event(action: str, **changes: Any) -> dict[str, Any]:
    return {
        "action": action,
        "cluster": "ml-cluster",
        "verdict": "DEGRADED",
        "execution_id": FIRST,
        "started_at": "2026-12-06T12:00:00.000Z",
        "handed_to": RESTORE,
        **changes,
    }


@pytest.mark.parametrize("action", ["open", "resolve"])
def test_a_later_runs_decision_stands(action: str) -> None:
    later = {"verdict": "HEALTHY", "execution_id": LATER, "started_at": "2026-12-06T12:01:30.000Z"}
    assert function(later).handle(event(action), None) == {"superseded_by": LATER}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("recorded", "changes"),
    [
        pytest.param(None, {}, id="no verdict recorded"),
        pytest.param({"execution_id": FIRST, "started_at": "2026-12-06T12:00:00.000Z"}, {}, id="its own"),
        pytest.param({"execution_id": LATER, "started_at": "2026-12-06T11:59:00.000Z"}, {}, id="an older"),
        pytest.param({"execution_id": LATER}, {}, id="one without its start (before issue 36)"),
        pytest.param(
            {"execution_id": LATER, "started_at": "2026-12-06T12:01:30.000Z"},
            {"handed_to": ""},
            id="not handed",
        ),
        pytest.param(
            {"execution_id": LATER, "started_at": "2026-12-06T12:01:30.000Z"},
            {"started_at": "x"},
            id="no start",
        ),
    ],
)
def test_otherwise_the_run_decides(recorded: dict[str, Any] | None, changes: dict[str, Any]) -> None:
    assert function(recorded)._superseded(event("open", **changes)) is None
