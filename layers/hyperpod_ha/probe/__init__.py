"""The controller probe: a read-only bash script run on every controller through SSM.

:func:`probe_script` is the script itself (``controller_probe.sh`` next to this file);
:func:`probe_command` is the one command line that runs it (:mod:`hyperpod_ha.node_scripts`:
base64-encoded, for the SSM agent splits the command without a shell). The same line is
embedded in the stack's Session document; a test keeps the two equal. It imports nothing from
the rest of :mod:`hyperpod_ha` but ``node_scripts``.
"""

from __future__ import annotations

import functools
from typing import Final

from hyperpod_ha.node_scripts import node_command, node_script

SCRIPT_NAME: Final = "controller_probe.sh"


def probe_script() -> str:
    """The probe's bash source."""
    return node_script(__name__, SCRIPT_NAME)


@functools.cache
def probe_command() -> str:
    """One command line running the probe: ``bash -c "echo <base64> | base64 -d | bash"``."""
    return node_command(__name__, SCRIPT_NAME)
