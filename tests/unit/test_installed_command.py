"""The ``hyperpod-ha`` command installed from a wheel works outside a checkout: what it reads
(captures, template, functions, state machines) ships as package data."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# setuptools builds in the source tree (build/, *.egg-info): it builds from a copy, never leaving
# files in the checkout nor shipping stale ones from an earlier build.
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv*", ".aws-sam", "build", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
)


def test_simulate_failover_from_an_installed_wheel_outside_the_checkout(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, symlinks=True, ignore=NOT_SOURCE)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", str(source), "-w", str(tmp_path)], check=True
    )
    (wheel,) = tmp_path.glob("hyperpod_ha-*.whl")
    site = tmp_path / "site"
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)], check=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # The wheel's packages come first on the path: the checkout's (installed editable) are not used.
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, hyperpod_ha_dev.cli as c; print(c.__file__); sys.exit(c.main())",
            "simulate",
            "failover",
        ],
        cwd=elsewhere,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines()[0].startswith(str(site))
    assert "verdict: FAILED_OVER (expected FAILED_OVER)" in run.stdout
