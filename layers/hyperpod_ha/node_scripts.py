"""The bash scripts the stack runs on a controller, and the one command line that carries each.

Each script sits beside the feature that owns it (``probe/controller_probe.sh``,
``drill/drill_node.sh``, ``restore/restore_node.sh``) and ships in the layer with it; a line
``. hyperpod_ha/<folder>/<name>.sh`` in one is that script's text (without its first line), put
in its place here (the drill's and the restore's start with ``acting/controller_node.sh``). No shell
parses the command: the SSM agent splits ``AWS-StartNonInteractiveCommand``'s command (and a
Session document's) with shell-like rules and executes it, so the script travels base64-encoded
(only ``[A-Za-z0-9+/=]``, nothing to quote) and is decoded and fed to bash on the node. It
imports nothing from the rest of :mod:`hyperpod_ha`.
"""

from __future__ import annotations

import base64
import functools
import re
from importlib import resources
from typing import Final

# A command must fit an SSM document and a StartSession parameter comfortably.
MAX_COMMAND_BYTES: Final = 40 * 1024
# A script's line that stands for another script of the package (one level: it includes none).
_INCLUDED: Final = re.compile(r"^\. hyperpod_ha/([a-z_]+)/([a-z_]+\.sh)$", re.MULTILINE)


def _source(package: str, name: str) -> str:
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


@functools.cache
def node_script(package: str, name: str) -> str:
    """The bash source of the script ``name`` beside the modules of ``package``, each included
    script in place (the text a controller runs)."""

    def included(line: re.Match[str]) -> str:
        text = _source(f"hyperpod_ha.{line.group(1)}", line.group(2))
        return text.split("\n", 1)[1].rstrip("\n")  # without its "#!" line

    return _INCLUDED.sub(included, _source(package, name))


def node_command(package: str, name: str, shell: str = "bash") -> str:
    """``bash -c "echo <the script, base64> | base64 -d | <shell>"``: ``shell`` reads the script
    from its input (``bash -s -- <arguments>`` passes it arguments)."""
    encoded = base64.b64encode(node_script(package, name).encode("utf-8")).decode("ascii")
    command = f'bash -c "echo {encoded} | base64 -d | {shell}"'
    if len(command) > MAX_COMMAND_BYTES:
        raise RuntimeError(f"the command of {name} is {len(command)} bytes, over {MAX_COMMAND_BYTES}")
    return command
