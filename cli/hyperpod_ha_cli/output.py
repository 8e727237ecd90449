"""Where the command's output goes: its result on stdout, nothing else there.

The functions, the embedded stack and the lab log through Powertools (JSON lines on the
logger's stream) and flush metrics with ``print``: while a command runs, both go to stderr
with ``--verbose`` and nowhere without it, so stdout holds only the result (with ``--json``,
exactly one JSON document).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from collections.abc import Iterator
from typing import TextIO, cast

from hyperpod_ha.observability import logger

_result: list[TextIO] = []


def result_stream() -> TextIO:
    """The stream for the command's result (stdout as it was when the command started)."""
    return _result[-1] if _result else sys.stdout


@contextlib.contextmanager
def command_output(verbose: bool) -> Iterator[TextIO]:
    """For the command's run: the result stream; logs, metrics and warnings to stderr or nowhere."""
    # Never closed: moto's interpreter threads may still log while the process exits.
    sink = sys.stderr if verbose else open(os.devnull, "w")  # noqa: SIM115
    result = sys.stdout
    at_fd_level = sys.stdout is sys.__stdout__ and _fd_is_open(1)
    if at_fd_level:
        # A real process: what children or C code write to fd 1 must not reach stdout either.
        sys.stdout.flush()
        result = os.fdopen(os.dup(1), "w")
        os.dup2(sink.fileno(), 1)
    handler = cast(logging.StreamHandler[TextIO], logger.registered_handler)
    saved_stream = handler.stream
    handler.setStream(sink)
    _result.append(result)
    try:
        with contextlib.redirect_stdout(sink), warnings.catch_warnings():
            if not verbose:
                warnings.simplefilter("ignore")
            yield result
    finally:
        _result.pop()
        result.flush()
        if not at_fd_level:
            # In process (tests): as it was. A real process is about to exit: the logger keeps
            # the sink, so nothing a late thread logs reaches stdout.
            handler.setStream(saved_stream)


def _fd_is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True
