"""Every parser on arbitrary text: a result or its typed error, never a crash."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperpod_ha.slurm import (
    SlurmOutputError,
    parse_agent_queue_size,
    parse_cluster_registrations,
    parse_dbd_ping,
    parse_heartbeat,
    parse_identity,
    parse_node_states,
    parse_ping,
    parse_probe_output,
    parse_role_log,
    parse_services,
    parse_show_config,
    parse_slurm_conf,
    parse_state_save,
)

# Arbitrary text, and text made of pieces the parsers look for.
fragments = st.sampled_from(
    [
        "Slurmctld(primary) at ctl1 is UP",
        "Slurmctld(backup) at ctl2 is DOWN",
        "** RESTORE SLURMCTLD DAEMON TO SERVICE **",
        "SlurmctldHost[0] = ctl1(10.0.0.1)",
        "SlurmctldTimeout = 10 sec",
        "path=/x",
        "bytes=0 0 0 1",
        "exists=yes",
        "process slurmctld pid=1 state=S",
        "systemctl slurmctld active",
        "lab|10.0.0.1|6817",
        "idle 2",
        "@@hyperpod-ha probe begin version=1 nonce=abcd",
        "@@hyperpod-ha abcd begin ping",
        "@@hyperpod-ha abcd end ping rc=0 ms=1 timed_out=0 truncated=0",
        'HYPERPOD_HA_PROBE_RESULT {"nonce":"abcd","complete":true}',
        "[2026-11-29T23:29:53.870] Running as primary controller",
        "=",
        "",
    ]
)
outside_text = st.one_of(
    st.text(), st.lists(st.one_of(fragments, st.text(max_size=20)), max_size=12).map("\n".join)
)

PARSERS = [
    parse_ping,
    parse_show_config,
    parse_slurm_conf,
    parse_cluster_registrations,
    parse_dbd_ping,
    parse_node_states,
    parse_agent_queue_size,
    parse_identity,
    parse_services,
    parse_role_log,
    parse_heartbeat,
    parse_state_save,
    parse_probe_output,
]


@pytest.mark.parametrize("parser", PARSERS, ids=[p.__name__ for p in PARSERS])
@settings(max_examples=150)
@given(text=outside_text)
def test_every_parser_returns_a_result_or_its_typed_error(parser: object, text: str) -> None:
    assert callable(parser)
    with contextlib.suppress(SlurmOutputError):
        parser(text)
