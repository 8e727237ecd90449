"""What a lab host sees: cut off the network, a read-only or hidden StateSaveLocation."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

from hyperpod_lab import network
from hyperpod_lab.hosts import LabHosts
from hyperpod_lab.lab_state import LabState
from hyperpod_lab.processes import (
    CLEAN_ENV,
    LabError,
)
from hyperpod_lab.topology import (
    Host,
)


class LabViews(LabHosts):
    def isolate(self, host: str) -> None:
        """Cut the host off the network; it keeps running and keeps the shared state."""
        self._set_isolated(host, True)

    def reconnect(self, host: str) -> None:
        self._set_isolated(host, False)

    def _set_isolated(self, name: str, isolated: bool) -> None:
        host = self.topology.host(name)
        state = self._running_state()
        network.set_connected(host, not isolated)
        state.isolated = _with(state.isolated, host.name, isolated)
        self._save(state)

    def make_state_unwritable(self, controller: str | None = None) -> None:
        """Make StateSaveLocation read-only for one controller or all, as a failing FSx would be.

        Root ignores file modes, so each controller gets a read-only bind mount in its own
        mount namespace; the machine's view is untouched.
        """
        self._set_state_view(self._controllers(controller), read_only=True)

    def restore_state_writable(self, controller: str | None = None) -> None:
        self._set_state_view(self._controllers(controller), read_only=False)

    def hide_heartbeat(self, controller: str | None = None) -> None:
        """The controller(s) can no longer read the heartbeat: an empty directory of their own is
        bound over StateSaveLocation in their mount namespace (as when FSx is not mounted there)."""
        self._set_state_view(self._controllers(controller), hidden=True)

    def show_heartbeat(self, controller: str | None = None) -> None:
        self._set_state_view(self._controllers(controller), hidden=False)

    def _set_state_view(
        self, hosts: Sequence[Host], *, read_only: bool | None = None, hidden: bool | None = None
    ) -> None:
        state = self._running_state()
        for host in hosts:
            if read_only is not None:
                state.read_only = _with(state.read_only, host.name, read_only)
            if hidden is not None:
                state.heartbeat_hidden = _with(state.heartbeat_hidden, host.name, hidden)
            self._mount_state(state, host)
        self._save(state)

    def _mount_state(self, state: LabState, host: Host) -> None:
        """Put the host's view of StateSaveLocation in the state's shape: unmount whatever the
        lab bound there, then bind again what the state asks for."""
        target = str(self.paths.state_dir)
        for _ in range(4):
            if not self._mount(state, host, ["umount", target], check=False):
                break
        if host.name in state.heartbeat_hidden:
            hidden = str(self.paths.hidden_state_dir(host.name))
            self._mount(state, host, ["mount", "--bind", hidden, target])
        if host.name in state.read_only:
            self._mount(state, host, ["mount", "--bind", target, target])
            self._mount(state, host, ["mount", "-o", "remount,bind,ro", target])

    def _mount(self, state: LabState, host: Host, argv: list[str], *, check: bool = True) -> bool:
        enter = ["nsenter", f"--target={state.holders[host.name]}", "--mount", "--"]
        done = subprocess.run(
            [*enter, *argv], capture_output=True, text=True, check=False, env=dict(CLEAN_ENV)
        )
        if check and done.returncode != 0:
            raise LabError(f"{argv[0]} on {host.name} failed: {done.stderr.strip()[:200]}")
        return done.returncode == 0


def _with(names: list[str], name: str, present: bool) -> list[str]:
    others = [other for other in names if other != name]
    return [*others, name] if present else others
