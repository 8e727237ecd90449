"""``sinfo``'s node states, on every captured output."""

from __future__ import annotations

import pytest

from hyperpod_ha.slurm import (
    SlurmOutputError,
    parse_node_states,
)
from tests.unit.slurm.cases.captures import blocks, capture, poller_outputs


@pytest.mark.parametrize(("where", "rc", "text"), blocks("sinfo_outputs.txt"))
def test_parse_node_states_on_every_captured_sinfo(where: str, rc: int, text: str) -> None:
    if rc == 0:
        states = parse_node_states(text)
        assert sum(state.count for state in states) == 2
    else:
        with pytest.raises(SlurmOutputError):
            parse_node_states(text)


def test_parse_node_states_on_every_captured_poller_result() -> None:
    results = poller_outputs("sinfo_poller_lines.txt")
    assert any(rc == 1 for rc, _ in results)
    for rc, text in results:
        if rc == 0:
            assert sum(state.count for state in parse_node_states(text)) == 2
        else:
            with pytest.raises(SlurmOutputError):
                parse_node_states(text)


def test_nodes_the_isolated_primary_marked_down_do_not_respond() -> None:
    states = parse_node_states(capture("sinfo_down_not_responding.txt"))
    assert [(s.state, s.count, s.responding) for s in states] == [("down*", 1, False), ("idle", 1, True)]
