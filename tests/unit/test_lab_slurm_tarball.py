"""Slurm 25.11 from a source tarball the lab is pointed to: found, checked by its sha256, extracted
and configured like 24.11 into its own prefix, once (a half build done again).

Each test makes a small fake tarball (a ``configure`` and a ``META``, nothing of Slurm's) and
fakes the build's steps: what is checked is which tarball is taken, what is refused before
anything is written, and how ``configure`` is invoked in the extracted tree.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path
from typing import IO

import pytest

from hyperpod_ha.observability import logger
from hyperpod_lab import slurm_source
from hyperpod_lab.__main__ import main
from hyperpod_lab.releases import MARKER, SlurmSourceError, installed_prefix, release
from hyperpod_lab.slurm_source import REQUIRED_PLUGINS, SYSCONFDIR, ensure_built
from hyperpod_lab.slurm_tarball import (
    DEFAULT_TARBALL,
    SOURCE_ENV,
    SlurmTarballMissing,
    SlurmTarballRejected,
    verified_tarball,
)


def fake_tarball(
    where: Path, top: str = "slurm-25.11.7", name: str = "slurm-25.11.7.tar.gz", *, configure: bool = True
) -> Path:
    """A gzipped tar with one top directory, as ``git archive --prefix=<top>/`` makes it."""
    where.mkdir(parents=True, exist_ok=True)
    path = where / name
    files = {"META": b"  Name:\t\tslurm\n  Major:\t\t25\n"}
    if configure:
        files["configure"] = b"#!/bin/sh\nexit 0\n"
    with tarfile.open(path, "w:gz") as archive:
        directory = tarfile.TarInfo(top)
        directory.type, directory.mode = tarfile.DIRTYPE, 0o755
        archive.addfile(directory)
        for member, data in files.items():
            info = tarfile.TarInfo(f"{top}/{member}")
            info.size, info.mode = len(data), 0o755
            archive.addfile(info, io.BytesIO(data))
    return path


def write_sums(tarball: Path, digest: str | None = None) -> None:
    digest = digest or hashlib.sha256(tarball.read_bytes()).hexdigest()
    (tarball.parent / "SHA256SUMS").write_text(f"{'0' * 64}  other.tar.gz\n{digest}  {tarball.name}\n")


class FakeSteps:
    """Stands in for configure, make and make install: records each, and install writes the prefix."""

    def __init__(
        self, *, fail: str | None = None, plugins: tuple[str, ...] = ("http_parser_libhttp_parser",)
    ) -> None:
        self.calls: list[tuple[list[str], Path]] = []
        self.fail = fail
        self.plugins = plugins  # what `make install` gives beyond the lab's common plugins
        self.tree_files: list[str] = []

    def __call__(self, argv: list[str], tree: Path, env: dict[str, str], sink: IO[str]) -> int:
        self.calls.append((argv, tree))
        self.tree_files = sorted(p.name for p in tree.iterdir())
        if argv[0] == self.fail:
            return 2
        if argv == ["make", "install"]:
            prefix = Path(self.calls[0][0][1].removeprefix("--prefix="))
            (prefix / "sbin").mkdir(parents=True)
            (prefix / "sbin" / "slurmctld").write_text("")
            (prefix / "lib" / "slurm").mkdir(parents=True)
            for plugin in (*REQUIRED_PLUGINS, *self.plugins):
                (prefix / "lib" / "slurm" / f"{plugin}.so").write_text("")
        return 0


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> FakeSteps:
    fake = FakeSteps()
    monkeypatch.setattr(slurm_source, "_run_step", fake)
    monkeypatch.delenv(SOURCE_ENV, raising=False)
    return fake


def test_25_11_is_built_from_a_tarball_and_24_11_from_trixie() -> None:
    assert release("25.11").origin == "tarball"
    assert release("25.11").built
    assert release("24.11").origin == "trixie"
    assert not release("22.05").built
    assert DEFAULT_TARBALL.parts[-3:] == ("shared", "slurm", "slurm-25.11.7.tar.gz")
    assert DEFAULT_TARBALL.parent.parent.parent == Path(slurm_source.__file__).resolve().parents[2].parent


def test_the_tarball_is_extracted_and_configured_like_24_11_into_its_own_prefix(
    tmp_path: Path, steps: FakeSteps
) -> None:
    tarball = fake_tarball(tmp_path / "downloads")
    write_sums(tarball)
    root = tmp_path / "opt"

    build = ensure_built("25.11", root, source=tarball)

    prefix = root / "slurm-25.11.7"
    assert build == slurm_source.SlurmBuild(prefix, built_now=True)
    configure, tree = steps.calls[0]
    assert configure[:4] == [
        "./configure",
        f"--prefix={prefix}",
        f"--sysconfdir={SYSCONFDIR}",
        "--with-munge",
    ]
    # A build for the lab only: no debug information, no dependency tracking, no static
    # libraries, no slurmrestd; with the HTTP parser slurmctld's /readyz needs (configure fails
    # without it rather than build without).
    assert set(configure[4:]) == {
        "--disable-debug",
        "--disable-dependency-tracking",
        "--disable-static",
        "--disable-slurmrestd",
        "--with-http-parser",
    }
    assert tree.name == "slurm-25.11.7"
    assert steps.tree_files == ["META", "configure"]  # the archive's tree, extracted
    assert [argv[:2] for argv, _ in steps.calls[1:]] == [["make", steps.calls[1][0][1]], ["make", "install"]]
    assert (prefix / MARKER).read_text().startswith("slurm-25.11.7.tar.gz built in ")
    assert installed_prefix("25.11", root) == prefix
    assert not (root / "build-25.11").exists()  # the extracted tree is removed, only the prefix stays
    assert tarball.is_file()


def test_a_finished_build_is_reused_and_a_half_one_redone(tmp_path: Path, steps: FakeSteps) -> None:
    tarball = fake_tarball(tmp_path / "downloads")
    write_sums(tarball)
    root = tmp_path / "opt"
    half = root / "slurm-25.11.7" / "sbin"
    half.mkdir(parents=True)
    (half / "slurmctld").write_text("interrupted")  # no marker: an interrupted build

    assert ensure_built("25.11", root, source=tarball).built_now
    assert (half / "slurmctld").read_text() == ""  # removed and made again
    count = len(steps.calls)

    again = ensure_built("25.11", root, source=tarball)
    default = ensure_built("25.11", root)  # nothing given: any complete 25.11 build

    assert not again.built_now
    assert not default.built_now
    assert again.prefix == default.prefix == root / "slurm-25.11.7"
    assert len(steps.calls) == count


def test_a_25_11_build_without_the_http_parser_is_built_again(tmp_path: Path, steps: FakeSteps) -> None:
    tarball = fake_tarball(tmp_path / "downloads")
    write_sums(tarball)
    root = tmp_path / "opt"
    ensure_built("25.11", root, source=tarball)
    plugin = root / "slurm-25.11.7" / "lib" / "slurm" / "http_parser_libhttp_parser.so"
    plugin.unlink()  # as a build made before the lab asked for the parser

    assert installed_prefix("25.11", root) is None
    assert ensure_built("25.11", root, source=tarball).built_now
    assert plugin.is_file()
    assert "libhttp-parser-dev" in release("25.11").packages
    assert "libhttp-parser-dev" not in release("24.11").packages
    assert release("24.11").configure_options == ()


def test_a_build_whose_install_lacks_the_http_parser_plugin_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slurm_source, "_run_step", FakeSteps(plugins=()))
    tarball = fake_tarball(tmp_path / "downloads")
    write_sums(tarball)

    with pytest.raises(
        slurm_source.SlurmSourceError, match="lacks plugins the lab needs: http_parser_libhttp_parser"
    ):
        ensure_built("25.11", tmp_path / "opt", source=tarball)


def test_the_environment_names_the_tarball(
    tmp_path: Path, steps: FakeSteps, monkeypatch: pytest.MonkeyPatch
) -> None:
    tarball = fake_tarball(tmp_path / "mine", name="my-slurm.tar.gz")
    write_sums(tarball)
    monkeypatch.setenv(SOURCE_ENV, str(tarball))

    assert verified_tarball("25.11").path == tarball
    assert ensure_built("25.11", tmp_path / "opt").prefix == tmp_path / "opt" / "slurm-25.11.7"


def test_a_given_sha256_replaces_the_sums_file(tmp_path: Path, steps: FakeSteps) -> None:
    tarball = fake_tarball(tmp_path)
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()

    assert verified_tarball("25.11", tarball, digest.upper()).sha256 == digest
    with pytest.raises(SlurmTarballRejected, match="no SHA256SUMS beside it and no --sha256 given"):
        verified_tarball("25.11", tarball)
    with pytest.raises(SlurmTarballRejected, match="64 hexadecimal digits"):
        verified_tarball("25.11", tarball, "abc; rm -rf /")


@pytest.mark.parametrize(
    ("sums", "given", "why"),
    [
        ("wrong", None, "sha256 of slurm-25.11.7.tar.gz is [0-9a-f]{64}, expected 1{64}: refusing"),
        ("other-only", None, "has no line for slurm-25.11.7.tar.gz; give its --sha256"),
        ("right", "2" * 64, "expected 2{64}"),
    ],
)
def test_a_sum_that_differs_or_is_unknown_builds_nothing(
    tmp_path: Path, steps: FakeSteps, sums: str, given: str | None, why: str
) -> None:
    tarball = fake_tarball(tmp_path / "downloads")
    if sums == "other-only":
        (tarball.parent / "SHA256SUMS").write_text(f"{'0' * 64}  slurm-25.11.6.tar.gz\n")
    else:
        write_sums(tarball, "1" * 64 if sums == "wrong" else None)
    root = tmp_path / "opt"

    with pytest.raises(SlurmTarballRejected, match=why):
        ensure_built("25.11", root, source=tarball, sha256=given)

    assert steps.calls == []
    assert not root.exists()


def test_a_missing_tarball_is_a_clear_error(
    tmp_path: Path, steps: FakeSteps, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(
        SlurmTarballMissing, match=r"no Slurm 25.11 source tarball at .*nowhere.tar.gz \(given\)"
    ):
        ensure_built("25.11", tmp_path / "opt", source=tmp_path / "nowhere.tar.gz")
    with pytest.raises(SlurmTarballMissing, match=f"the default \\(set {SOURCE_ENV} or --slurm-source\\)"):
        verified_tarball("25.11", default=tmp_path / "absent.tar.gz")
    monkeypatch.setenv(SOURCE_ENV, str(tmp_path / "from-env.tar.gz"))
    with pytest.raises(SlurmTarballMissing, match=r"from-env\.tar\.gz"):
        ensure_built("25.11", tmp_path / "opt")
    assert steps.calls == []
    assert not (tmp_path / "opt").exists()


@pytest.mark.parametrize(
    ("top", "configure", "why"),
    [
        ("slurm-24.11.5", True, "holds Slurm 24.11.5, not 25.11"),
        ("linux-6.1", True, "top directory 'linux-6.1' names no Slurm version"),
        ("slurm-25.11.7", False, "has no generated configure"),
    ],
)
def test_a_tarball_of_something_else_is_refused(
    tmp_path: Path, steps: FakeSteps, top: str, configure: bool, why: str
) -> None:
    tarball = fake_tarball(tmp_path, top, configure=configure)
    write_sums(tarball)

    with pytest.raises(SlurmTarballRejected, match=why):
        ensure_built("25.11", tmp_path / "opt", source=tarball)
    assert steps.calls == []


def test_github_s_archive_of_the_tag_names_the_version(tmp_path: Path) -> None:
    tarball = fake_tarball(tmp_path, "slurm-slurm-25-11-7-1")
    write_sums(tarball)

    assert verified_tarball("25.11", tarball).version == "25.11.7"


def test_a_failed_configure_leaves_no_finished_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slurm_source, "_run_step", FakeSteps(fail="./configure"))
    tarball = fake_tarball(tmp_path / "downloads")
    write_sums(tarball)
    root = tmp_path / "opt"

    with pytest.raises(SlurmSourceError, match=r"./configure --prefix=.* failed \(rc=2\); see"):
        ensure_built("25.11", root, source=tarball)
    assert installed_prefix("25.11", root) is None


def test_prepare_refuses_a_missing_tarball_in_one_line(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("hyperpod_lab.__main__.ensure_packages", lambda packages: [])
    # main() points the logger at this test's stderr: put it back after.
    handler = logger.registered_handler  # type: ignore[attr-defined]
    monkeypatch.setattr(handler, "stream", handler.stream)
    missing = tmp_path / "slurm-25.11.7.tar.gz"

    code = main(["prepare", "--slurm", "25.11", "--slurm-source", str(missing)])

    err = capfd.readouterr().err.strip().splitlines()
    assert code == 1
    assert err[-1] == f"hyperpod_lab prepare: no Slurm 25.11 source tarball at {missing} (given)"
