"""Installs the Debian packages the lab needs, so a fresh machine can run it.

Only what is missing is installed, and the package index is refreshed first (a fresh
machine's index may be empty or old). Nothing is removed at teardown: packages are the
machine's set-up, not the lab's state.
"""

from __future__ import annotations

import os
import subprocess

from hyperpod_ha.observability import logger
from hyperpod_lab.releases import DEFAULT_SERIES, RELEASES

# What the default lab (Slurm 24.11, built here) needs; Lab.up installs its own release's.
REQUIRED_PACKAGES: tuple[str, ...] = RELEASES[DEFAULT_SERIES].packages

# apt must never ask a question: there is nobody to answer it in CI.
_APT_ENV = {"DEBIAN_FRONTEND": "noninteractive", "NEEDRESTART_MODE": "a"}
_APT_TIMEOUT_SECONDS = 900.0


class PackageInstallError(RuntimeError):
    """apt-get could not install the lab's packages. ``reason`` is safe to log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def missing_packages(packages: tuple[str, ...] = REQUIRED_PACKAGES) -> list[str]:
    """The packages dpkg does not report as installed."""
    missing = []
    for package in packages:
        query = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", package],
            capture_output=True,
            text=True,
            check=False,
        )
        if query.returncode != 0 or "install ok installed" not in query.stdout:
            missing.append(package)
    return missing


def ensure_packages(packages: tuple[str, ...] = REQUIRED_PACKAGES) -> list[str]:
    """Install whatever of ``packages`` is missing; return what was installed."""
    missing = missing_packages(packages)
    if not missing:
        return []
    logger.info("installing lab packages", extra={"packages": missing})
    env = {**os.environ, **_APT_ENV}
    for argv in (
        ["apt-get", "update"],
        # Waits for another apt-get (an operator's, or Docker's install beside make test's).
        ["apt-get", "install", "-y", "-o", "DPkg::Lock::Timeout=300", "--no-install-recommends", *missing],
    ):
        done = subprocess.run(
            argv, env=env, capture_output=True, text=True, check=False, timeout=_APT_TIMEOUT_SECONDS
        )
        if done.returncode != 0:
            tail = done.stderr.strip().splitlines()[-3:]
            raise PackageInstallError(
                f"{' '.join(argv[:2])} failed (rc={done.returncode}): {' | '.join(tail)}"
            )
    still_missing = missing_packages(packages)
    if still_missing:
        raise PackageInstallError(f"packages still missing after apt-get install: {still_missing}")
    return missing
