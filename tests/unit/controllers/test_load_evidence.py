"""The report's load figures (controllers.load_evidence): sdiag, MaxDBDMsgs, what the node timed."""

from __future__ import annotations

from hyperpod_ha.controllers.check import check_controller
from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.slurm import ProbeSection
from tests.fakes.canned_runner import CannedRunner
from tests.unit.controllers.cases.probe_outputs import (
    NODE,
    OWN_DOCUMENT,
    primary_sections,
    probe_text,
    result,
    section,
)
from tests.unit.slurm.cases.sdiag import SDIAG


def _report(**changes: ProbeSection | None) -> ControllerReport:
    runner = CannedRunner(result=result(probe_text(**changes)))
    return check_controller(NODE, runner, document=OWN_DOCUMENT, deadline_seconds=60)


def _timed(name: str, text: str, ms: int, rc: int = 0) -> ProbeSection:
    return ProbeSection(name=name, text=text, exit_code=rc, millis=ms, timed_out=False, truncated=False)


def test_the_figures_of_a_loaded_controller() -> None:
    state_save = "path=/srv/state\nexists=yes\nwritable=yes\nwrite_ms=7"
    # MaxDBDMsgs 0 is Slurm's default: the larger of 10,000 and 2 x MaxJobCount + 4 x nodes (2 idle).
    config = primary_sections()["config"].text + "\nMaxDBDMsgs = 0\nMaxJobCount = 10000"
    load = _report(
        config=section("config", config),
        sdiag=_timed("sdiag", SDIAG, 840),
        ping=_timed("ping", "Slurmctld(primary) at ctl1 is UP", 31),
        state_save=section("state_save", state_save),
    ).load
    assert (load.server_threads, load.agent_queue, load.dbd_agent_queue) == (37, 4, 5120)
    assert (load.sdiag_ms, load.ping_ms, load.state_save_write_ms) == (840, 31, 7)
    assert load.max_dbd_msgs == 20000 + 4 * 2
    assert [row.name for row in load.rpc_types][:2] == ["REQUEST_JOB_INFO", "REQUEST_PARTITION_INFO"]
    assert load.error is None
    assert ControllerReport.from_json(_report(sdiag=_timed("sdiag", SDIAG, 840)).to_json()).load.rpc_users


def test_a_controller_that_does_not_answer_sdiag() -> None:
    refused = "slurm_get_statistics: Unable to contact slurm controller (connect failure)"
    load = _report(sdiag=section("sdiag", refused, 1)).load
    assert load.server_threads is None
    assert load.sdiag_ms is None
    assert load.error == f"sdiag: {refused}"
    hung = _report(sdiag=section("sdiag", "", 124, timed_out=True)).load
    assert hung.error is not None
    assert "timed out" in hung.error
    assert _report(sdiag=None).load.error == "sdiag: not in the probe output"
