"""The lab's operator commands and its Slurm releases, where no root and no running lab are needed.

A refused command must say why in one line, exit 2 and change nothing: every test here runs
on a lab root of its own (``tmp_path``) that is never brought up, and checks it stays empty.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hyperpod_ha_cli.main import main
from hyperpod_ha_dev.cli.lab import FAULT_NAMES
from hyperpod_lab import Lab, LabConfigError, Topology
from hyperpod_lab.crash_loop import CRASH_LINE
from hyperpod_lab.faults import FAULTS, LabFaultError, check, clear, last_fault
from hyperpod_lab.releases import RELEASES, SYSTEM_PATH, release
from hyperpod_lab.slurm_source import (
    MARKER,
    SlurmSourceError,
    debian_entry,
    installed_prefix,
    source_entry,
)


def test_the_commands_help_names_every_fault() -> None:
    assert tuple(FAULTS) == FAULT_NAMES


@pytest.mark.parametrize(
    ("fault", "host", "why"),
    [
        ("explode", "ctl1", "no fault 'explode'; known: kill, stop"),
        ("kill", "ctl9", "no lab host 'ctl9'; the lab's hosts: ctl1, ctl2, node1, node2"),
        ("kill", "node1", "kill applies to controllers; node1 is a compute node"),
        ("kill", "ctl1", "the lab is not up"),
        ("cut", "node2", "the lab is not up"),
        ("conf-drift", "node1", "conf-drift applies to controllers; node1 is a compute node"),
        ("conf-shared", "ctl2", "the lab is not up"),
        ("crash-loop", "node1", "crash-loop applies to controllers; node1 is a compute node"),
        ("crash-fixed", "ctl2", "the lab is not up"),
    ],
)
def test_a_fault_is_checked_before_anything_changes(tmp_path: Path, fault: str, host: str, why: str) -> None:
    lab = Lab(Topology(root=tmp_path / "lab"))

    with pytest.raises(LabFaultError, match=why.replace("(", r"\(").replace(")", r"\)")):
        check(lab, fault, host)

    assert not (tmp_path / "lab").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["lab", "fault", "explode", "ctl1"], "hyperpod-ha lab fault: no fault 'explode'"),
        (["lab", "fault", "kill", "ctl7"], "hyperpod-ha lab fault: no lab host 'ctl7'"),
        (["lab", "fault", "kill", "ctl1"], "hyperpod-ha lab fault: the lab is not up"),
        (["lab", "verify"], "hyperpod-ha lab verify: the lab is not up"),
        (["lab", "verify", "--restore", "standbys", "--json"], "hyperpod-ha lab verify: the lab is not up"),
        (["lab", "up", "--slurm", "23.02"], "hyperpod-ha lab up: slurm must be one of 24.11, 25.11, 22.05"),
        (["lab", "up", "--controllers", "4"], "hyperpod-ha lab up: controllers must be 2..3"),
        (["lab", "up", "--nodes", "0"], "hyperpod-ha lab up: nodes must be 1..2"),
    ],
)
def test_refused_commands_exit_2_with_one_line(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    root = tmp_path / "lab"

    code = main([*argv[:2], "--root", str(root), *argv[2:]] if argv[1] != "up" else argv)

    err = capfd.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1].startswith(message), err
    assert not root.exists()


def test_status_of_a_lab_that_is_not_up(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code = main(["lab", "status", "--root", str(tmp_path / "lab")])

    out = capfd.readouterr().out
    assert code == 0
    assert out.startswith("lab not up: Slurm 24.11, 2 controllers, 2 nodes")


def test_the_fault_record_is_read_and_cleared(tmp_path: Path) -> None:
    (tmp_path / "last-fault.json").write_text('{"fault": "kill", "host": "ctl1", "at": 1795995004.5}')

    assert last_fault(tmp_path) == {"fault": "kill", "host": "ctl1", "at": 1795995004.5}
    clear(tmp_path)
    assert last_fault(tmp_path) is None
    (tmp_path / "last-fault.json").write_text("[1, 2]")
    assert last_fault(tmp_path) is None


def test_releases() -> None:
    assert Topology().slurm == "24.11"
    assert release("24.11").built
    assert "libmunge-dev" in release("24.11").packages
    assert "slurmctld" not in release("24.11").packages
    assert not release("22.05").built
    assert {"slurmctld", "slurmd", "slurmdbd", "slurm-client", "munge"} <= set(release("22.05").packages)
    assert release("22.05").path() == SYSTEM_PATH
    assert set(RELEASES) == {"24.11", "25.11", "22.05"}
    with pytest.raises(LabConfigError):
        release("23.11")
    with pytest.raises(LabConfigError):
        Topology(slurm="21.08")


def test_a_stored_topology_without_a_release_is_22_05() -> None:
    data = Topology(controllers=3, nodes=1).to_json()
    assert data["slurm"] == "24.11"
    del data["slurm"]

    assert Topology.from_json(data) == Topology(controllers=3, nodes=1, slurm="22.05")


def test_the_built_prefix_is_found_only_when_complete(tmp_path: Path) -> None:
    for version, complete in (("24.11.4", True), ("24.11.5", True), ("24.11.6", False), ("22.05.8", True)):
        sbin = tmp_path / f"slurm-{version}" / "sbin"
        sbin.mkdir(parents=True)
        (sbin / "slurmctld").write_text("")
        if complete:
            (tmp_path / f"slurm-{version}" / MARKER).write_text("built\n")

    assert installed_prefix("24.11", tmp_path) == tmp_path / "slurm-24.11.5"
    assert installed_prefix("23.02", tmp_path) is None


def test_the_trixie_source_entry_comes_from_the_machines_deb822_entry(tmp_path: Path) -> None:
    (tmp_path / "debian.sources").write_text(
        "Types: deb\n"
        "URIs: http://mirror.example/debian-security\n"
        "Suites: bookworm-security\nComponents: main\n\n"
        "Types: deb deb-src\n"
        "# a comment\n"
        "URIs: http://mirror.example/debian/\n"
        "Suites: bookworm bookworm-updates\n"
        "Components: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    )

    uri, keyring = debian_entry((tmp_path / "none.list", tmp_path))

    assert (uri, keyring) == (
        "http://mirror.example/debian",
        "/usr/share/keyrings/debian-archive-keyring.gpg",
    )
    assert source_entry(uri, keyring) == (
        "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example/debian "
        "trixie main\n"
    )


def test_the_trixie_source_entry_comes_from_a_one_line_entry(tmp_path: Path) -> None:
    listed = tmp_path / "sources.list"
    listed.write_text(
        "# deb http://old.example/debian bookworm main\n"
        "deb http://security.example/debian-security bookworm-security main\n"
        "deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main contrib\n"
    )

    assert debian_entry((listed,)) == ("http://mirror.example/debian", "/k.gpg")
    assert (
        source_entry("http://mirror.example/debian", None)
        == "deb-src http://mirror.example/debian trixie main\n"
    )


def test_no_debian_entry_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "other.list").write_text("deb https://packages.example/apt stable main\n")

    with pytest.raises(SlurmSourceError, match="no Debian archive 'deb' entry"):
        debian_entry((tmp_path,))


def test_lab_verify_prints_the_timeline_as_the_run_goes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from hyperpod_ha_dev.simulation.lab import verify
    from hyperpod_ha_dev.simulation.timeline import TimelineEntry

    printed_while_running: list[str] = []

    class Verified:
        def to_json(self) -> dict[str, object]:
            return {
                "verdict": "HEALTHY",
                "active_controller": "ctl1",
                "reasons": ["ctl1 is active"],
                "fault": None,
                "incidents": [],
                "snapshots": [],
                "executions": 1,
                "restore_mode": "off",
                "restore_actions": [],
            }

    def verify_lab(lab: Lab, root: Path, follow: object = None, **_: object) -> Verified:
        assert callable(follow)
        follow(TimelineEntry(0.5, "Check the request"))
        follow(TimelineEntry(1.25, "  verdict", "HEALTHY"))
        printed_while_running.append(capsys.readouterr().out)  # before the run has ended
        return Verified()

    monkeypatch.setattr(Lab, "is_up", lambda self: True)
    monkeypatch.setattr(verify, "slurm_version", lambda lab: "24.11.5")
    monkeypatch.setattr(verify, "verify_lab", verify_lab)

    assert main(["lab", "verify", "--root", str(tmp_path / "lab")]) == 0

    assert printed_while_running[0].splitlines() == [
        "lab verification (Slurm 24.11.5)",
        "     0.50s  Check the request",
        "     1.25s    verdict  HEALTHY",
    ]
    assert capsys.readouterr().out.splitlines()[0] == "verdict: HEALTHY (active controller: ctl1)"


def test_crash_loop_is_refused_where_in_place_and_crash_fixed_where_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab = Lab(Topology(root=tmp_path / "lab"))
    monkeypatch.setattr(lab, "is_up", lambda: True)
    monkeypatch.setattr(lab, "pid", lambda host, daemon: None)
    lab.paths.host_etc("ctl2").mkdir(parents=True)
    assert lab.crash_loop_hosts() == []
    assert check(lab, "crash-loop", "ctl2") is FAULTS["crash-loop"]
    with pytest.raises(LabFaultError, match="ctl2's slurmctld is not made to exit at start"):
        check(lab, "crash-fixed", "ctl2")

    lab.crash_file("ctl2").write_text(CRASH_LINE)

    assert lab.crash_loop_hosts() == ["ctl2"]
    with pytest.raises(LabFaultError, match=r"already exits at every start \(crash-fixed first\)"):
        check(lab, "crash-loop", "ctl2")
    assert check(lab, "crash-fixed", "ctl2") is FAULTS["crash-fixed"]
