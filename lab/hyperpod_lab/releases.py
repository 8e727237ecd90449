"""Which Slurm the lab runs: 24.11 or 25.11 (what HyperPod's AMIs ship) or Debian's 22.05.

24.11 is built from Debian trixie's upstream tarball (:mod:`hyperpod_lab.slurm_source`), 25.11
from a source tarball of SchedMD's release tag the lab is pointed to
(:mod:`hyperpod_lab.slurm_tarball`), each into its own prefix under :data:`BUILD_ROOT`, so
nothing of them mixes with Debian's packages: every lab daemon and client of such a lab is
started from that prefix, and its binaries find their libraries and plugins there (the build's
run path and plugin directory). 22.05 is Debian bookworm's packages, in ``/usr``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from hyperpod_lab.topology import DEFAULT_SLURM, LabConfigError

BUILD_ROOT: Final = Path("/opt/hyperpod-lab")
DEFAULT_SERIES: Final = DEFAULT_SLURM
SYSTEM_PATH: Final = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Written into a build's prefix once the build is whole (what it took, how long).
MARKER: Final = ".hyperpod-lab-built"


class SlurmSourceError(RuntimeError):
    """Slurm could not be fetched or built. ``reason`` is safe to log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def complete_build(prefix: Path, series: str | None = None) -> bool:
    """A finished install, with every plugin the lab needs from ``series``' build (a 25.11 built
    without the HTTP parser lacks one, and is built again)."""
    if not ((prefix / MARKER).is_file() and (prefix / "sbin" / "slurmctld").is_file()):
        return False
    known = RELEASES.get(series) if series else None
    return all(
        (prefix / "lib" / "slurm" / f"{name}.so").is_file() for name in (known.plugins if known else ())
    )


def installed_prefix(series: str, root: Path = BUILD_ROOT) -> Path | None:
    """The newest complete build of ``series`` (e.g. ``24.11``) under ``root``, or None."""
    found = []
    for candidate in root.glob(f"slurm-{series}.*"):
        if complete_build(candidate, series):
            patch = candidate.name.rsplit(".", 1)[-1]
            found.append((int(patch) if patch.isdigit() else -1, candidate))
    return max(found)[1] if found else None


# What every lab needs, whatever the Slurm: munge (one munged per host) and ip.
_COMMON_PACKAGES: Final = ("munge", "iproute2")
# What building 24.11 or 25.11 needs: a compiler, and the headers of what the lab uses (munge for
# authentication, MariaDB for slurmdbd's storage, json-c for the JSON output of --json).
BUILD_PACKAGES: Final = (
    "build-essential",
    "pkgconf",
    "libmunge-dev",
    "libmariadb-dev",
    "libjson-c-dev",
)
# What slurmctld's HTTP probes need at build time (25.11+).
HTTP_PARSER_PACKAGES: Final = ("libhttp-parser-dev",)
_DEBIAN_SLURM: Final = ("slurmctld", "slurmd", "slurmdbd", "slurm-client")

# Where a release comes from: Debian trixie's upstream tarball, a source tarball the lab is
# pointed to (checked by its sha256), or Debian's own packages.
Origin = Literal["trixie", "tarball", "debian"]


@dataclass(frozen=True)
class SlurmRelease:
    """One Slurm release series the lab can run."""

    series: str  # "24.11", "25.11" or "22.05"
    origin: Origin
    # Since 25.05 a controller taking over exits ("fatal: No Assoc usage file (...) to recover",
    # src/common/assoc_mgr.c:6050 in 25.11.7) when StateSaveLocation has a clustername file but
    # a state file is missing, as in a fresh one's first 300 s (PERIODIC_CHECKPOINT).
    needs_state_files: bool = False
    # Slurm 25.11's slurmctld answers GET /readyz, /livez and /healthz on SlurmctldPort only when
    # built with an HTTP parser (Debian's libhttp-parser-dev); without one it closes such a
    # connection unanswered. ``configure --with-http-parser`` fails rather than build without it.
    http_probes: bool = False

    @property
    def configure_options(self) -> tuple[str, ...]:
        """What this release's ``configure`` gets beyond the lab's common options."""
        return ("--with-http-parser",) if self.http_probes else ()

    @property
    def plugins(self) -> tuple[str, ...]:
        """Plugins a complete build of this release has beyond the lab's common ones (a build
        made before the HTTP parser was asked for lacks its plugin: it is built again)."""
        return ("http_parser_libhttp_parser",) if self.http_probes else ()

    @property
    def built(self) -> bool:
        """True: built from source into ``prefix``; False: Debian's packages."""
        return self.origin != "debian"

    @property
    def packages(self) -> tuple[str, ...]:
        """The Debian packages this release's lab needs installed."""
        if not self.built:
            return _COMMON_PACKAGES + _DEBIAN_SLURM
        return _COMMON_PACKAGES + BUILD_PACKAGES + (HTTP_PARSER_PACKAGES if self.http_probes else ())

    def prefix(self) -> Path | None:
        """Where the built release is installed (None for Debian's packages)."""
        if not self.built:
            return None
        return installed_prefix(self.series)

    def path(self) -> str:
        """The PATH of the lab's commands: the release's own binaries first."""
        prefix = self.prefix()
        if prefix is None:
            return SYSTEM_PATH
        return f"{prefix / 'sbin'}:{prefix / 'bin'}:{SYSTEM_PATH}"


RELEASES: Final = {
    "24.11": SlurmRelease("24.11", "trixie"),
    "25.11": SlurmRelease("25.11", "tarball", needs_state_files=True, http_probes=True),
    "22.05": SlurmRelease("22.05", "debian"),
}


def release(series: str) -> SlurmRelease:
    """The release for ``24.11``, ``25.11`` or ``22.05``; :class:`LabConfigError` for anything else."""
    found = RELEASES.get(series)
    if found is None:
        raise LabConfigError(f"slurm must be one of {', '.join(RELEASES)}, got {series[:20]!r}")
    return found
