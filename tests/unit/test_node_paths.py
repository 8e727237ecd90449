"""A fake node's path moved inside the script a command carries, and nothing else changed."""

from __future__ import annotations

import base64
import re

import pytest

from hyperpod_ha.slurm_triggers.node import triggers_command
from hyperpod_ha_dev.simulation.node_paths import moved


def carried(command: str) -> str:
    (encoded,) = re.findall(r"echo ([A-Za-z0-9+/=]+) \| base64 -d", command)
    return base64.b64decode(encoded).decode()


def test_the_path_is_moved_in_the_script_and_the_rest_of_the_line_kept() -> None:
    command = triggers_command()
    line = moved(command, "/usr/local/libexec/hyperpod-ha", "/tmp/node/libexec")
    assert "PROGRAM_DIR=/tmp/node/libexec\n" in carried(line)
    assert "/usr/local/libexec/hyperpod-ha" not in carried(line)
    assert line.split("|")[-1] == command.split("|")[-1]  # the shell and its arguments


def test_a_command_without_a_script_is_kept_and_two_scripts_are_refused() -> None:
    assert moved("scontrol ping", "/a", "/b") == "scontrol ping"
    two = 'bash -c "echo YQ== | base64 -d | bash; echo Yg== | base64 -d | bash"'
    with pytest.raises(ValueError, match="2 scripts"):
        moved(two, "/a", "/b")
