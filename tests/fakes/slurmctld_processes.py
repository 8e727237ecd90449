"""Processes named slurmctld on a controller, for the node scripts' tests (issue 35, finding 5).

Each is a copy of ``sleep`` named ``slurmctld``: the node's Slurm binary (``sbin/slurmctld``, the
one on the scripts' PATH or in the unit's ExecStart) or an impostor (``elsewhere/slurmctld``, or a
shell script of that name), run by root or another user. Their directory is one every user can
enter (pytest's own are root's only), so a process can run as ``nobody``; starting one as another
user needs root (:data:`AS_ROOT`). Every process is killed and the directory removed at the end.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

AS_ROOT: Final = os.getuid() == 0
OTHER_USER: Final = "nobody"


@dataclass
class SlurmctldProcesses:
    root: Path
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @classmethod
    @contextmanager
    def made(cls) -> Iterator[SlurmctldProcesses]:
        root = Path(tempfile.mkdtemp(prefix="hyperpod-ha-slurmctld-"))
        root.chmod(0o755)
        made = cls(root)
        try:
            yield made
        finally:
            for process in made.started:
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGKILL)  # a script's sleep too
                    process.wait()
            shutil.rmtree(root, ignore_errors=True)

    @property
    def node_binary(self) -> Path:
        """The node's Slurm binary: ``<root>/sbin/slurmctld``."""
        return self.binary("sbin")

    def binary(self, folder: str) -> Path:
        """A copy of ``sleep`` named slurmctld in ``folder`` (made once)."""
        path = self.root / folder / "slurmctld"
        if not path.exists():
            path.parent.mkdir(mode=0o755, exist_ok=True)
            shutil.copy(shutil.which("sleep") or "/bin/sleep", path)
            path.chmod(0o755)
        return path

    def script(self, folder: str) -> Path:
        """A shell script named slurmctld (its process is named so, its executable is bash)."""
        path = self.root / folder / "slurmctld"
        path.parent.mkdir(mode=0o755, exist_ok=True)
        path.write_text('#!/bin/bash\nsleep "$@"\n')  # no exec: bash stays, named slurmctld
        path.chmod(0o755)
        return path

    def start(self, binary: Path | None = None, *, user: str | None = None, stopped: bool = False) -> int:
        """A process of ``binary`` (the node's by default) run as ``user`` (this test's by
        default), stopped (SIGSTOP) when asked; its pid."""
        process = subprocess.Popen(
            [str(binary or self.node_binary), "600"], user=user, start_new_session=True
        )
        self.started.append(process)
        if stopped:
            process.send_signal(signal.SIGSTOP)
        return process.pid
