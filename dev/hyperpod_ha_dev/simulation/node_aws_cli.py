"""The ``aws`` command of a controller, for the lab's hosts and the roll-out's test nodes.

On HyperPod the roll-out's node script (``hyperpod_ha.rotation.slurmdbd_credentials``) reads the
database secret itself: ``aws secretsmanager get-secret-value --secret-id <id> --version-stage
AWSCURRENT --query SecretString --output text [--region <r>]``, with the controller's instance
role. The shipped script has no other way to get it (no variable, no argument): where no AWS CLI
and no instance role are, the lab and the tests put this stand-in first on the node command's
PATH. It answers that one call for the one secret being served, from a file of mode 600 in a
directory of mode 700 that exists only while a roll-out's request runs, and refuses every other
call as the real CLI would (an unknown command: exit 252; another secret, or none served: an
AWS error, exit 254). The secret never appears on a command line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Final

COMMAND: Final = "aws"
SERVED: Final = "served.json"  # {"secret_id": ..., "secret_string": ...}, mode 600

# The program itself: standard library only, run by whichever python3 the node has.
_PROGRAM: Final = '''
"""The lab's stand-in for the AWS CLI with a controller's instance role: the roll-out's one call."""
import json
import sys

SERVED = {served!r}
CALL = ["secretsmanager", "get-secret-value", "--secret-id", None, "--version-stage", "AWSCURRENT",
        "--query", "SecretString", "--output", "text"]


def main(args):
    if len(args) == len(CALL) + 2 and args[-2] == "--region":
        args = args[:-2]
    if len(args) != len(CALL) or any(want is not None and got != want for got, want in zip(args, CALL)):
        sys.stderr.write("aws: the lab's stand-in answers only secretsmanager get-secret-value "
                         "--secret-id ID --version-stage AWSCURRENT --query SecretString --output text\\n")
        return 252
    try:
        with open(SERVED) as handle:
            served = json.load(handle)
    except (OSError, ValueError):
        served = None
    if not served or served.get("secret_id") != args[3]:
        sys.stderr.write("An error occurred (AccessDeniedException) when calling the GetSecretValue "
                         "operation: the instance role may not read this secret now\\n")
        return 254
    sys.stdout.write(served["secret_string"] + "\\n")
    return 0


sys.exit(main(sys.argv[1:]))
'''


def install(directory: Path, interpreter: str) -> Path:
    """The stand-in ``aws`` in ``directory`` (created, mode 700), run by ``interpreter`` (an
    absolute path, or ``/usr/bin/env python3``); the directory goes first on the node's PATH."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    program = directory / COMMAND
    program.write_text(f"#!{interpreter}\n{_PROGRAM.format(served=str(directory / SERVED))}")
    program.chmod(0o700)
    return program


def serve(directory: Path, secret_id: str, secret_string: str) -> None:
    """Answer ``get-secret-value`` of ``secret_id`` with ``secret_string`` (mode 600, never
    through a link), until :func:`withdraw`."""
    served = directory / SERVED
    served.unlink(missing_ok=True)
    descriptor = os.open(served, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump({"secret_id": secret_id, "secret_string": secret_string}, handle)


def withdraw(directory: Path) -> None:
    """Serve no secret any more: every call is refused."""
    (directory / SERVED).unlink(missing_ok=True)
