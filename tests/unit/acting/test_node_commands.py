"""The kit's one reader of a node script's output (its result line, its values, its rows) and
its one way of running a Session document: a command that could not run, or a script cut
short, is the feature's own error (the drill's, the restore's), which its state machine
catches by name."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.acting.node_commands import (
    RESULT_MARK,
    NodeDocuments,
    ScriptOutputRejected,
    parse_script_output,
)
from hyperpod_ha.commands import CommandRequest, CommandResult, TargetUnreachable
from hyperpod_ha.drill.node_commands import DrillCommandFailed
from hyperpod_ha.restore.errors import RestoreCommandFailed
from tests.fakes.canned_runner import CannedRunner


def test_values_rows_and_the_result_line_are_read() -> None:
    output = parse_script_output(
        f"before=stopped\nbefore=again\njob 4 RUNNING\n\naction=takeover index=2\n{RESULT_MARK} rc=3\n"
    )
    assert output.rc == 3
    assert output.values == {"before": "stopped", "action": "takeover index=2"}  # the first of a key
    assert output.rows == (("job", "4", "RUNNING"),)


def test_a_value_is_cut_and_an_output_without_its_result_line_is_refused() -> None:
    assert parse_script_output(f"output={'x' * 1000}\n{RESULT_MARK} rc=0").values["output"] == "x" * 400
    with pytest.raises(ScriptOutputRejected, match="did not finish"):
        parse_script_output("before=stopped\n")
    with pytest.raises(ScriptOutputRejected):
        parse_script_output(f"{RESULT_MARK} rc=none")


@given(st.text(max_size=300))
def test_any_output_parses_or_is_refused_with_a_value_error(text: str) -> None:
    with contextlib.suppress(ValueError):
        parse_script_output(text)


@pytest.mark.parametrize("failed", [DrillCommandFailed, RestoreCommandFailed])
def test_a_document_that_could_not_run_or_did_not_finish_is_the_features_error(
    failed: type[Exception],
) -> None:
    unreachable = CannedRunner(error=TargetUnreachable("the agent is not connected"))
    with pytest.raises(failed, match="TargetUnreachable: the agent is not connected"):
        NodeDocuments(unreachable, 60, failed).run("i-1", "Doc")  # type: ignore[arg-type]
    cut = CannedRunner(result=CommandResult("before=stopped\n", "", 137, 1.0, "fake"))
    with pytest.raises(failed, match=r"did not finish.*exit code 137"):
        NodeDocuments(cut, 60, failed).run("i-1", "Doc")  # type: ignore[arg-type]


def test_a_document_runs_on_its_target_with_its_parameters_and_deadline() -> None:
    runner = CannedRunner(result=CommandResult(f"a=1\n{RESULT_MARK} rc=0\n", "", 0, 1.0, "fake"))
    output = NodeDocuments(runner, 60, RestoreCommandFailed).run("i-1", "Doc", {"action": ["list"]})
    assert (output.rc, output.values) == (0, {"a": "1"})
    assert runner.requests == [CommandRequest("i-1", "Doc", 60, {"action": ["list"]})]
