"""Starting, finding and stopping the lab's processes by PID.

Daemons are started detached (their own session, output to files) so they outlive the
command that started the lab. This machine's PID 1 does not reap orphans, so the
``Popen`` objects of the processes this Python process started are kept to reap them;
a process that is a zombie counts as gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

# What a command gets instead of the caller's environment: no credentials leak into the
# lab, and commands see what a root shell started by an agent would.
CLEAN_ENV: Mapping[str, str] = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/root",
    "LANG": "C.UTF-8",
}

_children: dict[int, subprocess.Popen[bytes]] = {}


class LabError(RuntimeError):
    """The lab could not do what was asked. ``reason`` is safe to log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class LabTimeout(LabError):
    """A bounded wait for readiness ran out."""


def run(
    argv: Sequence[str], *, timeout: float = 30.0, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run a set-up command; on failure raise :class:`LabError` with the tail of its stderr."""
    try:
        done = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout, check=False, env=dict(CLEAN_ENV)
        )
    except subprocess.TimeoutExpired:
        raise LabError(f"{argv[0]} {' '.join(argv[1:3])} timed out after {timeout:g} s") from None
    if check and done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise LabError(f"{' '.join(argv[:4])} failed (rc={done.returncode}): {tail}")
    return done


def spawn(
    argv: Sequence[str],
    output: Path,
    *,
    env: Mapping[str, str] = CLEAN_ENV,
    user: str | None = None,
) -> int:
    """Start ``argv`` detached (new session, stdin closed, output appended to ``output``).

    Launchers in front of the daemon (``ip netns exec``, ``unshare``, ``nsenter``, ``sh -c
    'exec ...'``) all exec, so the PID returned is the daemon's own.
    """
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("ab") as sink:
        child = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=dict(env),
            start_new_session=True,
            close_fds=True,
            user=user,
            group=user,
        )
    _children[child.pid] = child
    return child.pid


def _reap(pid: int) -> None:
    child = _children.get(pid)
    if child is not None and child.poll() is not None:
        del _children[pid]


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may hold blanks: split after it.
    return raw[raw.rfind(")") + 2 :].split()


def alive(pid: int | None) -> bool:
    """Whether ``pid`` runs (stopped counts as running; a zombie does not)."""
    if pid is None or pid <= 0:
        return False
    _reap(pid)
    fields = _stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def stopped(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and fields[0] in ("T", "t")


def command_name(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def first_child(pid: int) -> int | None:
    """The oldest child of ``pid`` (launchers that fork have exactly one)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    return int(children[0]) if children else None


def running_pids() -> list[int]:
    """Every PID on the machine that is not a zombie."""
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and alive(int(entry.name))
    ]


def pid_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def thread_count(pid: int) -> int | None:
    fields = _stat_fields(pid)
    # Field 20 of /proc/PID/stat (num_threads); the list starts at field 3.
    return int(fields[17]) if fields else None


def send(pid: int | None, sig: signal.Signals, expect: str | None = None) -> bool:
    """Signal ``pid`` if it runs and (when given) its command name is ``expect``.

    The name check keeps a recycled PID from a past lab from being signalled.
    """
    if pid is None or not alive(pid):
        return False
    if expect is not None and command_name(pid) != expect:
        return False
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return False
    return True


def wait_gone(pids: Iterable[int], timeout: float) -> set[int]:
    """Wait until none of ``pids`` runs; return those still running at the deadline."""
    remaining = {pid for pid in pids if alive(pid)}
    deadline = time.monotonic() + timeout
    while remaining and time.monotonic() < deadline:
        time.sleep(0.05)
        remaining = {pid for pid in remaining if alive(pid)}
    return remaining


def terminate(pids: Iterable[int], grace: float) -> list[int]:
    """SIGTERM (after SIGCONT, for stopped ones), then SIGKILL what outlives ``grace``.

    Returns the PIDs that were signalled.
    """
    targets = sorted({pid for pid in pids if alive(pid)})
    for pid in targets:
        send(pid, signal.SIGCONT)
        send(pid, signal.SIGTERM)
    for pid in wait_gone(targets, grace):
        send(pid, signal.SIGKILL)
    wait_gone(targets, 2.0)
    return targets


def kill_all(pids: Iterable[int], timeout: float = 5.0) -> list[int]:
    """SIGKILL every running PID of ``pids``, wait (bounded) until they are gone, return them."""
    targets = sorted({pid for pid in pids if alive(pid)})
    for pid in targets:
        send(pid, signal.SIGKILL)
    wait_gone(targets, timeout)
    return targets


def wait_until(check: Callable[[], T | None], *, timeout: float, what: str, interval: float = 0.1) -> T:
    """Poll ``check`` until it returns something other than None (bounded)."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result is not None:
            return result
        if time.monotonic() >= deadline:
            raise LabTimeout(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)
