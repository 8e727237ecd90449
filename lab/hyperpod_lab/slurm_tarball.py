"""Slurm 25.11 for the lab: a source tarball the lab is pointed to, checked by its sha256.

No Debian suite reachable here serves 25.11, so the lab builds it from a tarball of SchedMD's
release tag (``git archive --prefix=slurm-25.11.7/ slurm-25-11-7-1``: the tag carries its
generated ``configure``). Which tarball: ``--slurm-source PATH`` on ``prepare``/``up``, else
``HYPERPOD_LAB_SLURM_SOURCE``, else the project's ``../shared/slurm/slurm-25.11.7.tar.gz``.
Its sha256 is a ``--sha256`` given, else its line in the ``SHA256SUMS`` beside it; a tarball
without a known sum, or whose sum differs, is refused before anything is extracted or built.
Nothing of Slurm's source is kept in the project: the tarball stays where it is, and the
build (:func:`hyperpod_lab.slurm_source.ensure_built`) extracts it under the build root.
"""

from __future__ import annotations

import hashlib
import os
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from hyperpod_lab.releases import SlurmSourceError

SOURCE_ENV: Final = "HYPERPOD_LAB_SLURM_SOURCE"
DEFAULT_TARBALL_NAME: Final = "slurm-25.11.7.tar.gz"
SUMS_NAME: Final = "SHA256SUMS"
# lab/hyperpod_lab/slurm_tarball.py -> the project root's sibling ``shared``.
PROJECT_ROOT: Final = Path(__file__).resolve().parents[2]
DEFAULT_TARBALL: Final = PROJECT_ROOT.parent / "shared" / "slurm" / DEFAULT_TARBALL_NAME

_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
# The archive's one top directory names the version: slurm-25.11.7/ (git archive's prefix)
# or slurm-slurm-25-11-7-1/ (GitHub's archive of the tag).
_TOP = re.compile(r"slurm-(?P<version>\d{2}\.\d{2}\.\d{1,3})|slurm-slurm-(?P<tag>\d{2}-\d{2}-\d{1,3})-\d+")
_HASH_CHUNK: Final = 1 << 20


class SlurmTarballMissing(SlurmSourceError):
    """No source tarball where the lab was pointed (or none was given and the default is absent)."""


class SlurmTarballRejected(SlurmSourceError):
    """The tarball's sha256 is unknown or differs, or it is not a Slurm source tree of the release."""


@dataclass(frozen=True)
class SlurmTarball:
    """A source tarball whose sha256 matched: where it is, and the version inside it."""

    path: Path
    sha256: str
    version: str  # e.g. "25.11.7"

    @property
    def series(self) -> str:
        return self.version.rsplit(".", 1)[0]


def given_source(cli_path: Path | None = None) -> Path | None:
    """The tarball the operator named: ``--slurm-source``, else the environment variable."""
    if cli_path is not None:
        return cli_path
    named = os.environ.get(SOURCE_ENV, "").strip()
    return Path(named) if named else None


def expected_sha256(tarball: Path, given: str | None = None) -> str:
    """The sum the tarball must have: ``given``, else its line in ``SHA256SUMS`` beside it."""
    if given is not None:
        if not _SHA256.fullmatch(given.strip()):
            raise SlurmTarballRejected("--sha256 must be 64 hexadecimal digits")
        return given.strip().lower()
    sums = tarball.parent / SUMS_NAME
    try:
        text = sums.read_text(errors="replace")[:100_000]
    except OSError:
        raise SlurmTarballRejected(
            f"no sha256 for {tarball.name}: no {SUMS_NAME} beside it and no --sha256 given"
        ) from None
    for line in text.splitlines():
        # sha256sum's format: "<hex>  <name>" (a '*' before the name in binary mode).
        fields = line.split()
        if len(fields) == 2 and _SHA256.fullmatch(fields[0]) and fields[1].lstrip("*") == tarball.name:
            return fields[0].lower()
    raise SlurmTarballRejected(f"{sums} has no line for {tarball.name}; give its --sha256")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def verified_tarball(
    series: str, source: Path | None = None, sha256: str | None = None, default: Path = DEFAULT_TARBALL
) -> SlurmTarball:
    """The tarball of ``series`` to build, checked by its sha256 and its top directory.

    ``source`` None: the environment variable's, else ``default``. Nothing is extracted here.
    """
    path = given_source(source) or default
    if not path.is_file():
        how = "given" if given_source(source) else f"the default (set {SOURCE_ENV} or --slurm-source)"
        raise SlurmTarballMissing(f"no Slurm {series} source tarball at {path} ({how})")
    expected = expected_sha256(path, sha256)
    found = sha256_of(path)
    if found != expected:
        raise SlurmTarballRejected(
            f"sha256 of {path.name} is {found}, expected {expected}: refusing to build it"
        )
    version = tarball_version(path)
    if version.rsplit(".", 1)[0] != series:
        raise SlurmTarballRejected(f"{path.name} holds Slurm {version}, not {series}")
    return SlurmTarball(path, found, version)


def tarball_version(path: Path) -> str:
    """The version named by the archive's top directory, which must hold a ``configure``."""
    try:
        with tarfile.open(path) as archive:
            top: str | None = None
            has_configure = False
            for member in archive:
                first, _, rest = member.name.lstrip("./").partition("/")
                if top is None:
                    top = first
                elif first != top:
                    raise SlurmTarballRejected(f"{path.name} has more than one top directory")
                has_configure = has_configure or (rest == "configure" and member.isfile())
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise SlurmTarballRejected(
            f"{path.name} is not a readable tar archive: {type(exc).__name__}"
        ) from None
    match = _TOP.fullmatch(top or "")
    if match is None:
        raise SlurmTarballRejected(f"{path.name}'s top directory {str(top)[:60]!r} names no Slurm version")
    if not has_configure:
        raise SlurmTarballRejected(f"{path.name} has no generated configure (a release tag's archive has)")
    return match["version"] or match["tag"].replace("-", ".")
