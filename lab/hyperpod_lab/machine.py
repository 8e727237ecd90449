"""What the labs on one machine share: the machine's munged (the login host's, where client
commands run) and the mount points every lab host binds its own directory onto (/etc/slurm,
/run/munge, /usr/local/libexec/hyperpod-ha).

Several labs can be up at once (one per slot, :mod:`hyperpod_lab.topology`). The first lab
that needs one of these creates it; the last lab to go removes it. Removing a mount point in
the machine's namespace would detach the mounts on it in every other lab's hosts, so nothing
is removed while another lab's state file exists. Each decision is made under one machine-wide
lock, so two labs coming up or going down together agree on who creates and who removes.
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from hyperpod_lab import munge
from hyperpod_lab.processes import cmdline, command_name, running_pids, terminate
from hyperpod_lab.topology import MAX_SLOT, Topology, slot_root

LOCK_PATH: Final = Path(tempfile.gettempdir()) / "hyperpod-lab-machine.lock"
# The machine munged a lab starts keeps its files here, not under one lab's root: it outlives
# the lab that started it while others still use it. Its command line names this directory.
MUNGE_DIR: Final = Path("/run/hyperpod-lab-munge")
SLURM_ETC: Final = Path("/etc/slurm")
# Where the Slurm triggers' install writes their program (hyperpod_ha.slurm_triggers): each host
# binds its own directory there, so nothing of it lands on the machine.
TRIGGER_PROGRAM_DIR: Final = Path("/usr/local/libexec/hyperpod-ha")
# Mount points removed only while empty (the machine's own files are never touched).
_EMPTY_DIRECTORIES: Final = (SLURM_ETC, TRIGGER_PROGRAM_DIR, TRIGGER_PROGRAM_DIR.parent)
# Mount points the labs created (absent before the first lab); removed with the last lab.
_CREATED: Final = MUNGE_DIR / "created"
_MUNGED_GRACE_SECONDS: Final = 2.0


@contextlib.contextmanager
def machine_lock() -> Iterator[None]:
    with LOCK_PATH.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def other_labs(topology: Topology) -> list[Path]:
    """The state files of the machine's other labs (one per slot, at the slot's root)."""
    found = []
    for slot in range(MAX_SLOT + 1):
        state_file = slot_root(slot) / "lab.json"
        if slot_root(slot) != topology.root and state_file.exists():
            found.append(state_file)
    return found


def acquire() -> None:
    """Make what every lab needs from the machine, if no earlier lab has: the mount points and
    a munged answering for the login host. Call under :func:`machine_lock`."""
    MUNGE_DIR.mkdir(mode=0o700, exist_ok=True)
    created = set(_created())
    for mount_point in (SLURM_ETC, munge.RUN_DIR, TRIGGER_PROGRAM_DIR.parent, TRIGGER_PROGRAM_DIR):
        if not mount_point.exists():
            created.add(str(mount_point))
    _CREATED.write_text("".join(f"{path}\n" for path in sorted(created)))
    SLURM_ETC.mkdir(exist_ok=True)
    for directory in (TRIGGER_PROGRAM_DIR.parent, TRIGGER_PROGRAM_DIR):
        if str(directory) in created:
            directory.mkdir(mode=0o755, exist_ok=True)
            directory.chmod(0o755)  # whatever the umask: the triggers' install checks each above it
    if not munge.answers():
        munge.start(MUNGE_DIR)


def release(topology: Topology) -> list[str]:
    """Remove what :func:`acquire` made once no other lab is up; what was removed. Call under
    :func:`machine_lock`. A munged the machine ran before any lab is never stopped."""
    if other_labs(topology) or not MUNGE_DIR.exists():
        return []
    removed = []
    ours = [pid for pid in running_pids() if command_name(pid) == "munged" and str(MUNGE_DIR) in cmdline(pid)]
    if ours:
        terminate(ours, _MUNGED_GRACE_SECONDS)
        removed += [f"munged {pid}" for pid in ours]
    # The deepest first: /usr/local/libexec/hyperpod-ha before /usr/local/libexec.
    for path in sorted(map(Path, _created()), key=lambda path: len(path.parts), reverse=True):
        if path in _EMPTY_DIRECTORIES:
            with contextlib.suppress(OSError):
                path.rmdir()  # only if still empty: the labs' mount point, nothing else
        else:
            shutil.rmtree(path, ignore_errors=True)
        removed.append(f"directory {path}")
    shutil.rmtree(MUNGE_DIR, ignore_errors=True)
    return removed


def _created() -> list[str]:
    try:
        return [line for line in _CREATED.read_text().splitlines() if line]
    except OSError:
        return []
