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

It also answers ``aws sns publish --topic-arn ARN --message M [--subject S] [--region R]``, what
the Slurm triggers' program (``hyperpod_ha.slurm_triggers``) and HyperPod's ON/OFF programs run:
the lab has no SNS, so a stand-in installed with an ``outbox`` appends the publish as one JSON
line (its UTC time, the topic, the subject and the message) to that file, on the lab's shared
file system, and prints a ``MessageId`` as the CLI does; the development tools relay each line to
the embedded stack's topic (``hyperpod_ha_dev.simulation.lab.topic_relay``). SNS's own rules are
kept (a subject of at most 100 printable ASCII characters, a message not empty: otherwise
``InvalidParameter``, exit 254); a message is at most :data:`MESSAGE_CHARS` characters, so every
line stays bounded. Without an outbox, a publish is refused as a role without
``sns:Publish`` would be (exit 254).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Final

COMMAND: Final = "aws"
SERVED: Final = "served.json"  # {"secret_id": ..., "secret_string": ...}, mode 600
# The lab's bound on a published message (SNS takes 256 KiB; ours are one line of about 100).
MESSAGE_CHARS: Final = 8192

# The program itself: standard library only, run by whichever python3 the node has.
_PROGRAM: Final = '''
"""The lab's stand-in for the AWS CLI with a controller's instance role: the roll-out's one call,
and sns publish into the lab's outbox."""
import datetime
import json
import os
import sys
import uuid

SERVED = {served!r}
OUTBOX = {outbox!r}
MESSAGE_CHARS = {message_chars!r}
CALL = ["secretsmanager", "get-secret-value", "--secret-id", None, "--version-stage", "AWSCURRENT",
        "--query", "SecretString", "--output", "text"]
PUBLISH_OPTIONS = ("--topic-arn", "--message", "--subject", "--region")


def refused(text, code):
    sys.stderr.write(text + "\\n")
    return code


def invalid(what):
    return refused("An error occurred (InvalidParameter) when calling the Publish operation: "
                   "Invalid parameter: " + what, 254)


def publish(args):
    options = {{}}
    while args:
        if len(args) < 2 or args[0] not in PUBLISH_OPTIONS or args[0] in options:
            return refused("aws: the lab's stand-in answers only sns publish --topic-arn ARN "
                           "--message TEXT [--subject TEXT] [--region REGION]", 252)
        options[args[0]] = args[1]
        args = args[2:]
    if "--topic-arn" not in options or "--message" not in options:
        return refused("aws: error: the following arguments are required: --topic-arn, --message", 252)
    if OUTBOX is None:
        return refused("An error occurred (AuthorizationError) when calling the Publish operation: "
                       "the instance role may not publish here", 254)
    subject, message = options.get("--subject"), options["--message"]
    if subject is not None and (not subject or len(subject) > 100
                                or any(not " " <= c <= "~" for c in subject)):
        return invalid("Subject")
    if not message or len(message) > MESSAGE_CHARS:
        return invalid("Message too long" if message else "Empty message")
    at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
    line = json.dumps({{"at": at.replace("+00:00", "Z"), "topic_arn": options["--topic-arn"][:256],
                       "subject": subject, "message": message}})
    # One write of one line, appended: lines of two programs at once never interleave.
    descriptor = os.open(OUTBOX, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        os.write(descriptor, (line + "\\n").encode())
    finally:
        os.close(descriptor)
    sys.stdout.write(json.dumps({{"MessageId": str(uuid.uuid4())}}) + "\\n")
    return 0


def main(args):
    if args[:2] == ["sns", "publish"]:
        return publish(args[2:])
    if len(args) == len(CALL) + 2 and args[-2] == "--region":
        args = args[:-2]
    if len(args) != len(CALL) or any(want is not None and got != want for got, want in zip(args, CALL)):
        return refused("aws: the lab's stand-in answers only secretsmanager get-secret-value "
                       "--secret-id ID --version-stage AWSCURRENT --query SecretString --output text, "
                       "and sns publish", 252)
    try:
        with open(SERVED) as handle:
            served = json.load(handle)
    except (OSError, ValueError):
        served = None
    if not served or served.get("secret_id") != args[3]:
        return refused("An error occurred (AccessDeniedException) when calling the GetSecretValue "
                       "operation: the instance role may not read this secret now", 254)
    sys.stdout.write(served["secret_string"] + "\\n")
    return 0


sys.exit(main(sys.argv[1:]))
'''


def install(directory: Path, interpreter: str, outbox: Path | None = None) -> Path:
    """The stand-in ``aws`` in ``directory`` (created, mode 700), run by ``interpreter`` (an
    absolute path, or ``/usr/bin/env python3``); the directory goes first on the node's PATH.
    ``outbox``: where ``sns publish`` appends (None: publishing is refused)."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    program = directory / COMMAND
    text = _PROGRAM.format(
        served=str(directory / SERVED),
        outbox=str(outbox) if outbox is not None else None,
        message_chars=MESSAGE_CHARS,
    )
    program.write_text(f"#!{interpreter}\n{text}")
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
