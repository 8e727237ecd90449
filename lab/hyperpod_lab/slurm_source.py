"""The lab's Slurm builds (once per machine): 24.11 from Debian trixie's upstream tarball, and
25.11 from a source tarball the lab is pointed to (:mod:`hyperpod_lab.slurm_tarball` finds and
checks it; it is built here the same way).

The tarball comes through apt's own client: a ``deb-src`` entry for trixie is made at run
time from this machine's Debian entry (its mirror and keyring; nothing of it is written in
the repository) in a private apt directory, so the machine's apt configuration and lists
are left as they are. ``apt-get source --download-only slurm-wlm`` fetches the upstream
tarball (checked against the signed index); the Debian packaging beside it is not needed:
Slurm is built upstream's way (``configure && make && make install``) into
``/opt/hyperpod-lab/slurm-<version>``, with ``/etc/slurm`` as its configuration directory
(the lab binds each host's own there). A marker written last says the build is complete;
an interrupted build is removed and done again.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final

from hyperpod_ha.observability import logger
from hyperpod_lab.releases import (
    BUILD_ROOT,
    MARKER,
    SYSTEM_PATH,
    SlurmSourceError,
    complete_build,
    installed_prefix,
    release,
)

if TYPE_CHECKING:
    from hyperpod_lab.slurm_tarball import SlurmTarball

SOURCE_PACKAGE: Final = "slurm-wlm"
SOURCE_SUITE: Final = "trixie"
SYSCONFDIR: Final = "/etc/slurm"
APT_SOURCES: Final = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))
# Plugins the lab's configuration names: a build without one of them cannot run the lab.
REQUIRED_PLUGINS: Final = (
    "auth_munge",
    "cred_munge",
    "accounting_storage_mysql",
    "accounting_storage_slurmdbd",
    "proctrack_linuxproc",
    "select_cons_tres",
    "cgroup_v1",
    "serializer_json",
)
_APT_TIMEOUT: Final = 600.0
_BUILD_TIMEOUT: Final = 3600.0
_ORIG = re.compile(r"slurm-wlm_(?P<version>(?P<series>\d+\.\d+)\.\d+)\.orig\.tar\.gz")


# --- the source entry -------------------------------------------------------------------


def debian_entry(sources: tuple[Path, ...] = APT_SOURCES) -> tuple[str, str | None]:
    """(mirror URI, keyring) of this machine's Debian archive entry (not debian-security)."""
    files: list[Path] = []
    for source in sources:
        if source.is_dir():
            files += sorted(p for p in source.iterdir() if p.suffix in (".list", ".sources"))
        elif source.is_file():
            files.append(source)
    for path in files:
        try:
            text = path.read_text()
        except OSError:
            continue
        entries = _deb822_entries(text) if path.suffix == ".sources" else _one_line_entries(text)
        for uri, keyring in entries:
            if re.search(r"/debian/?$", uri):
                return uri.rstrip("/"), keyring
    raise SlurmSourceError(
        "no Debian archive 'deb' entry in /etc/apt/sources.list(.d) to make a trixie deb-src entry from"
    )


def _deb822_entries(text: str) -> list[tuple[str, str | None]]:
    entries = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            if line.startswith("#") or ":" not in line:
                continue
            key, _, value = line.partition(":")
            fields[key.strip().lower()] = value.strip()
        if "deb" in fields.get("types", "").split() and fields.get("enabled", "yes") != "no":
            keyring = fields.get("signed-by") or None
            entries += [(uri, keyring) for uri in fields.get("uris", "").split()]
    return entries


def _one_line_entries(text: str) -> list[tuple[str, str | None]]:
    entries = []
    for line in text.splitlines():
        match = re.match(r"\s*deb\s+(?:\[(?P<options>[^]]*)\]\s+)?(?P<uri>\S+)\s+\S+", line)
        if match is None:
            continue
        options = dict(o.split("=", 1) for o in (match["options"] or "").split() if "=" in o)
        entries.append((match["uri"], options.get("signed-by")))
    return entries


def source_entry(uri: str, keyring: str | None) -> str:
    signed = f"[signed-by={keyring}] " if keyring and keyring.startswith("/") else ""
    return f"deb-src {signed}{uri} {SOURCE_SUITE} main\n"


# --- fetching and building -------------------------------------------------------------------


def _apt(work: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    private = [
        f"-o=Dir::Etc::SourceList={work / 'sources.list'}",
        f"-o=Dir::Etc::SourceParts={work / 'sources.list.d'}",
        f"-o=Dir::State::Lists={work / 'lists'}",
        f"-o=Dir::Cache={work / 'cache'}",
        "-o=APT::Sandbox::User=root",
    ]
    env = {"PATH": SYSTEM_PATH, "HOME": "/root", "LANG": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive"}
    try:
        return subprocess.run(
            ["apt-get", *private, *argv],
            cwd=work / "src",
            env=env,
            capture_output=True,
            text=True,
            timeout=_APT_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SlurmSourceError(f"apt-get {argv[0]} timed out after {_APT_TIMEOUT:g} s") from None


def fetch_tarball(work: Path, series: str) -> Path:
    """Download the upstream tarball of ``series`` from trixie into ``work/src``."""
    for sub in ("sources.list.d", "lists/partial", "cache/archives/partial", "src"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    (work / "sources.list").write_text(source_entry(*debian_entry()))
    updated = _apt(work, "update")
    if updated.returncode != 0:
        raise SlurmSourceError(f"apt-get update for trixie's sources failed: {_tail(updated.stderr)}")
    # The Debian packaging files beside the tarball may be missing on the mirror (apt then
    # exits non-zero): only the upstream tarball is needed.
    fetched = _apt(work, "source", "--download-only", SOURCE_PACKAGE)
    tarballs = [
        p for p in (work / "src").iterdir() if (m := _ORIG.fullmatch(p.name)) and m["series"] == series
    ]
    if not tarballs:
        raise SlurmSourceError(
            f"apt-get source {SOURCE_PACKAGE} gave no Slurm {series} upstream tarball from {SOURCE_SUITE}: "
            f"{_tail(fetched.stderr) or 'no output'}"
        )
    return max(tarballs)


@dataclass(frozen=True)
class SlurmBuild:
    """A complete build of a release series: where it is, and whether this call made it."""

    prefix: Path
    built_now: bool


def ensure_built(
    series: str, root: Path = BUILD_ROOT, *, source: Path | None = None, sha256: str | None = None
) -> SlurmBuild:
    """A complete build of ``series``: reused when there, else fetched (or checked) and built.

    24.11 is fetched from trixie; 25.11 is a source tarball the lab is pointed to
    (:mod:`hyperpod_lab.slurm_tarball`: ``source``, ``sha256``, else its defaults). A tarball
    named explicitly is built under its own version's prefix unless that build is complete.
    One build at a time per machine (a lock file under ``root``).
    """
    from_tarball = release(series).origin == "tarball"
    tarball = None
    if from_tarball:
        from hyperpod_lab.slurm_tarball import given_source, verified_tarball

        if given_source(source) is not None or sha256 is not None:
            # Checked before anything is locked, extracted or removed.
            tarball = verified_tarball(series, source, sha256)
    if (done := _finished(series, root, tarball)) is not None:
        return SlurmBuild(done, built_now=False)
    if from_tarball and tarball is None:
        tarball = verified_tarball(series)
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (done := _finished(series, root, tarball)) is not None:
            return SlurmBuild(done, built_now=False)  # built by whoever held the lock before us
        started = time.monotonic()
        work = root / f"build-{series}"
        shutil.rmtree(work, ignore_errors=True)
        if tarball is not None:
            work.mkdir(parents=True)
            archive, version = tarball.path, tarball.version
        else:
            archive = fetch_tarball(work, series)
            match = _ORIG.fullmatch(archive.name)
            assert match is not None
            version = match["version"]
        prefix = root / f"slurm-{version}"
        shutil.rmtree(prefix, ignore_errors=True)  # an interrupted build's remains
        logger.info("building Slurm for the lab", extra={"tarball": archive.name, "prefix": str(prefix)})
        _build(archive, work, prefix, release(series).configure_options, release(series).plugins)
        shutil.rmtree(work, ignore_errors=True)
        (prefix / MARKER).write_text(f"{archive.name} built in {time.monotonic() - started:.0f} s\n")
        logger.info(
            "Slurm built", extra={"prefix": str(prefix), "seconds": round(time.monotonic() - started)}
        )
        return SlurmBuild(prefix, built_now=True)


def _finished(series: str, root: Path, tarball: SlurmTarball | None) -> Path | None:
    """The complete build to reuse: the given tarball's version's, else any of ``series``."""
    if tarball is None:
        return installed_prefix(series, root)
    prefix = root / f"slurm-{tarball.version}"
    return prefix if complete_build(prefix, series) else None


def build_seconds(prefix: Path) -> int | None:
    """How long the build under ``prefix`` took, as its marker recorded it."""
    try:
        found = re.search(r"built in ([0-9]{1,6}) s", (prefix / MARKER).read_text()[:200])
    except OSError:
        return None
    return int(found[1]) if found else None


def _build(
    tarball: Path, work: Path, prefix: Path, options: tuple[str, ...] = (), plugins: tuple[str, ...] = ()
) -> None:
    with tarfile.open(tarball) as archive:
        archive.extractall(work / "tree", filter="data")
    (tree,) = (work / "tree").iterdir()
    log = work.parent / f"{prefix.name}.build.log"
    # One job more than cores: compiles wait on the disk now and then.
    jobs = str(max(os.cpu_count() or 1, 1) + 1)
    steps = [
        [
            "./configure",
            f"--prefix={prefix}",
            f"--sysconfdir={SYSCONFDIR}",
            "--with-munge",
            # A lab build is run, never debugged: no debug information (upstream's default adds
            # -ggdb3, a quarter of the compile time) and no dependency files for a build made once.
            "--disable-debug",
            "--disable-dependency-tracking",
            # Shared libraries only: with static ones too, libtool compiles every file of
            # libslurm twice. No slurmrestd (nothing of the lab calls it), whose data parsers and
            # OpenAPI plugins the HTTP parser would otherwise bring in.
            "--disable-static",
            "--disable-slurmrestd",
            *options,
        ],
        ["make", f"-j{jobs}"],
        ["make", "install"],
    ]
    # -O1, as upstream's debug default ends with; -pipe spares the temporary files.
    env = {"PATH": SYSTEM_PATH, "HOME": "/root", "LANG": "C.UTF-8", "CFLAGS": "-O1 -pipe"}
    with log.open("w") as sink:
        for argv in steps:
            sink.write(f"$ {' '.join(argv)}\n")
            sink.flush()
            try:
                returncode = _run_step(argv, tree, env, sink)
            except subprocess.TimeoutExpired:
                raise SlurmSourceError(f"{argv[0]} timed out; see {log}") from None
            if returncode != 0:
                raise SlurmSourceError(f"{' '.join(argv[:2])} failed (rc={returncode}); see {log}")
    missing = [
        name
        for name in (*REQUIRED_PLUGINS, *plugins)
        if not (prefix / "lib" / "slurm" / f"{name}.so").is_file()
    ]
    if missing:
        raise SlurmSourceError(
            f"the build lacks plugins the lab needs: {', '.join(missing)} (missing -dev packages?); see {log}"
        )


def _run_step(argv: list[str], tree: Path, env: dict[str, str], sink: IO[str]) -> int:
    """One step of the build in the extracted tree, its output appended to the build log."""
    return subprocess.run(
        argv, cwd=tree, env=env, stdout=sink, stderr=subprocess.STDOUT, timeout=_BUILD_TIMEOUT, check=False
    ).returncode


def _tail(text: str) -> str:
    return " | ".join(line for line in text.strip().splitlines()[-2:])[:300]
