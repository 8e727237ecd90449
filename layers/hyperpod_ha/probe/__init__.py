"""The controller probe: a read-only bash script run on every controller through SSM.

:func:`probe_script` is the script itself (``controller_probe.sh`` next to this file);
:func:`probe_command` is the one command line that runs it where no shell parses the command:
the SSM agent splits ``AWS-StartNonInteractiveCommand``'s command (and our Session document's)
with shell-like rules and executes it, so the script travels base64-encoded (only
``[A-Za-z0-9+/=]``, nothing to quote) and is decoded and fed to bash on the node. The same
line is embedded in the stack's Session document; a test keeps the two equal. It imports
nothing from the rest of :mod:`hyperpod_ha`.
"""

from __future__ import annotations

import base64
import functools
from importlib import resources
from typing import Final

SCRIPT_NAME: Final = "controller_probe.sh"
# The command must fit an SSM document and a StartSession parameter comfortably.
MAX_COMMAND_BYTES: Final = 40 * 1024


@functools.cache
def probe_script() -> str:
    """The probe's bash source."""
    return resources.files(__name__).joinpath(SCRIPT_NAME).read_text(encoding="utf-8")


@functools.cache
def probe_command() -> str:
    """One command line running the probe: ``bash -c "echo <base64> | base64 -d | bash"``."""
    encoded = base64.b64encode(probe_script().encode("utf-8")).decode("ascii")
    command = f'bash -c "echo {encoded} | base64 -d | bash"'
    if len(command) > MAX_COMMAND_BYTES:
        raise RuntimeError(f"probe command is {len(command)} bytes, over {MAX_COMMAND_BYTES}")
    return command
