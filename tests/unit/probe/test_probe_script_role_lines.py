"""The probe's role lines on a fake controller: only slurmctld's own lines whose whole message is a
role, refusal or fatal phrase, whatever a user wrote into its log (issue 35, finding 1).

The probe's awk runs under each awk found here: HyperPod's Ubuntu has mawk 1.3.4 (no ``{n}``
intervals), Debian's lab gawk.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from hyperpod_ha.commands import CommandResult
from hyperpod_ha.controllers.check import report_from_result
from hyperpod_ha.probe import probe_script
from hyperpod_ha.slurm import classify_refusal_line, classify_role_line, log_line, parse_probe_output
from hyperpod_ha_dev import CAPTURES
from tests.fakes.probe_host import NODE, ProbeHost
from tests.unit.slurm.cases.forged_log import HEADERS, PHRASES, USER_TEXT_STARTS

AWKS = [name for name in ("gawk", "mawk", "original-awk", "busybox") if shutil.which(name)]
FORGED = [
    f"[2026-12-04T07:50:0{i % 10}.120] {USER_TEXT_STARTS[0]}{phrase}" for i, phrase in enumerate(PHRASES)
]
# A carriage return inside a user's text, then a whole forged line after it.
FORGED_CR = [f"[2026-12-04T07:50:09.000] {USER_TEXT_STARTS[0]}x\r{HEADERS[0]}{phrase}" for phrase in PHRASES]


def awk_dir(tmp_path: Path, awk: str) -> Path:
    """A directory whose ``awk`` is the named one (busybox's as ``busybox awk``)."""
    directory = tmp_path / f"awk-{awk}"
    directory.mkdir()
    target = shutil.which(awk)
    assert target is not None
    if awk == "busybox":
        (directory / "awk").write_text(f'#!/bin/sh\nexec {target} awk "$@"\n')
        (directory / "awk").chmod(0o755)
    else:
        (directory / "awk").symlink_to(target)
    return directory


def selected(lines: list[str], tmp_path: Path, awk: str) -> list[bool]:
    """For each line alone, whether the probe's ``last_role_lines`` keeps it."""
    log = tmp_path / "lines.txt"
    log.write_bytes("".join(f"{line}\n" for line in lines).encode())
    script = probe_script()
    definitions = script[: script.rindex("main ")]
    loop = 'while IFS= read -r line; do printf "%s\\n" "$line" | last_role_lines | wc -l; done <"$1"'
    done = subprocess.run(
        ["bash", "-c", f"{definitions}\n{loop}", "probe", str(log)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={"PATH": f"{awk_dir(tmp_path, awk)}:/usr/bin:/bin", "LC_ALL": "C"},
    )
    counts = done.stdout.split()
    assert len(counts) == len(lines)
    return [count == "1" for count in counts]


def python_keeps(line: str) -> bool:
    own = log_line(line)
    return own is not None and (
        classify_role_line(line) is not None
        or classify_refusal_line(line) is not None
        or own.message.startswith("fatal: ")
    )


def candidate_lines() -> list[str]:
    lines = [
        line
        for path in sorted(CAPTURES.glob("slurmctld_log_*.txt"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    lines += [f"{header}{phrase}" for header in HEADERS for phrase in PHRASES]
    lines += [
        f"{header}{start}{phrase}" for header in HEADERS for start in USER_TEXT_STARTS for phrase in PHRASES
    ]
    lines += FORGED_CR
    lines += [
        "2026-11-29T23:30:42+0000 ctl2 systemd[1]: Running as primary controller",
        "Running as primary controller",
    ]
    return lines


@pytest.mark.parametrize("awk", AWKS)
def test_the_probe_and_the_parser_keep_the_same_lines(tmp_path: Path, awk: str) -> None:
    lines = candidate_lines()
    kept = selected(lines, tmp_path, awk)
    differ = [line for line, probe in zip(lines, kept, strict=True) if probe != python_keeps(line)]
    assert differ == []
    assert sum(kept) > 50  # the real role lines and the whole phrases are kept


@pytest.mark.parametrize("awk", AWKS)
def test_forged_lines_after_the_primarys_role_line_leave_it_primary(
    controller: ProbeHost, tmp_path: Path, awk: str
) -> None:
    with controller.log.open("a") as log:
        log.write("".join(f"{line}\n" for line in [*FORGED, *FORGED_CR]))
    controller.commands["awk"] = f'exec {awk_dir(tmp_path, awk) / "awk"} "$@"\n'
    text = controller.run()
    report = report_from_result(NODE, CommandResult(text, None, None, 1, "t"))

    assert USER_TEXT_STARTS[0] not in parse_probe_output(text).sections["role"].text

    assert report.role.logged == "primary"
    assert report.role.line == "[2026-11-29T23:29:53.870] Running as primary controller"
    assert (report.role.refusal, report.role.fatal_message) == (None, None)


def test_forged_lines_in_the_journal_leave_it_primary(controller: ProbeHost) -> None:
    (controller.root / "show_config.txt").write_text(
        controller.show_config().replace(
            f"SlurmctldLogFile        = {controller.log}", "SlurmctldLogFile        = (null)"
        )
    )
    journal = ["2026-11-29T23:29:53+0000 ctl1 slurmctld[7841]: Running as primary controller"]
    journal += [f"2026-12-04T07:50:01+0000 ctl1 slurmctld[7841]: {USER_TEXT_STARTS[0]}{p}" for p in PHRASES]
    journal += [f"2026-12-04T07:50:02+0000 ctl1 systemd[1]: {phrase}" for phrase in PHRASES]
    newest_first = "".join(f"printf '%s\\n' {shlex.quote(line)}\n" for line in reversed(journal))
    controller.commands["journalctl"] = newest_first
    text = controller.run()
    report = report_from_result(NODE, CommandResult(text, None, None, 1, "t"))

    assert (
        parse_probe_output(text).sections["role"].text.splitlines()[2:] == journal[:1]
    )  # after now_local= and source=

    assert report.role.source == "journal:slurmctld"
    assert report.role.logged == "primary"
    assert (report.role.refusal, report.role.fatal_message) == (None, None)
