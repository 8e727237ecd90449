"""A node script's fixed path moved under a fake node's own directory, for the tests and the
simulation: the shipped scripts that write as root take no path from their environment (no test
seam), so a fake node runs the same command with the path replaced in the script it carries."""

from __future__ import annotations

import base64
import re

# hyperpod_ha.node_scripts.node_command's form: bash -c "echo <base64> | base64 -d | <shell>".
_ENCODED = re.compile(r"(?<=echo )[A-Za-z0-9+/=]+(?= \| base64 -d)")


def moved(command: str, path: str, to: str) -> str:
    """``command`` with every ``path`` in the script it carries replaced by ``to`` (a command
    that carries no script, as it is)."""

    def rewrite(encoded: re.Match[str]) -> str:
        script = base64.b64decode(encoded.group(0)).decode("utf-8")
        return base64.b64encode(script.replace(path, to).encode("utf-8")).decode("ascii")

    rewritten, count = _ENCODED.subn(rewrite, command)
    if count > 1:
        raise ValueError(f"the command carries {count} scripts, not one")
    return rewritten
