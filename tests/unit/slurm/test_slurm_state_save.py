"""The StateSaveLocation: the heartbeat file and the directory."""

from __future__ import annotations

import pytest

from hyperpod_ha.slurm import (
    SlurmOutputError,
    decode_heartbeat,
    parse_heartbeat,
    parse_state_save,
)
from hyperpod_ha_dev import CAPTURES
from tests.unit.slurm.cases.captures import capture


def test_decode_the_captured_heartbeats() -> None:
    # 02: xxd shows 0000 0000 6b0c b57c / 0000 0000 0000 0000, the lab decoded time=1795995004 writer_index=0
    assert "time=1795995004" in capture("heartbeat_02_xxd.txt")
    assert decode_heartbeat((CAPTURES / "heartbeat_writer0.bin").read_bytes()) == (1795995004, 0)
    assert "controller_index=1" in capture("heartbeat_04b_hex.txt")
    assert decode_heartbeat((CAPTURES / "heartbeat_writer1.bin").read_bytes()) == (1795993445, 1)


@pytest.mark.parametrize("data", [b"", b"\x00" * 8, b"\x00" * 17, b"\x00" * 8 + b"\xff" * 8])
def test_decode_heartbeat_rejects_other_files(data: bytes) -> None:
    with pytest.raises(SlurmOutputError):
        decode_heartbeat(data)


def test_parse_heartbeat_section() -> None:
    beat = parse_heartbeat(
        "path=/srv/state/heartbeat\nexists=yes\nsize=16\nmtime=1795995005\nnow=1795995007\n"
        "bytes= 0 0 0 0 107 12 181 124 0 0 0 0 0 0 0 1\n"
    )
    assert (beat.beat_time, beat.writer_index, beat.age_seconds, beat.error) == (1795995004, 1, 3, None)
    short = parse_heartbeat("path=/x/heartbeat\nexists=yes\nsize=4\nnow=5\nbytes=0 0 0 1\n")
    assert short.writer_index is None
    assert short.error == "heartbeat is 4 bytes, expected 16"
    missing = parse_heartbeat("path=/x/heartbeat\nexists=no\nnow=5\n")
    assert missing.exists is False
    with pytest.raises(SlurmOutputError):
        parse_heartbeat("bytes=1 2 300\n")


def test_parse_state_save_section() -> None:
    state = parse_state_save(
        "path=/fsx/state\nexists=yes\nowner=slurm\nmode=755\nmount_target=/fsx\nfstype=lustre\n"
        "source=10.1.0.5@tcp:/abcd\nwritable=yes\nslurm_user=slurm\nwritable_by_slurm_user=no\n"
    )
    assert (state.mount_target, state.fstype, state.writable, state.writable_by_slurm_user) == (
        "/fsx",
        "lustre",
        True,
        False,
    )
