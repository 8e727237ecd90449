"""The known-bad Slurm releases: each row applies exactly to its ranges, and says where it comes from."""

from __future__ import annotations

import pytest

from hyperpod_ha.slurm import ADVISORIES, advisories_for, applying, release_of, walking


def keys(version: str | None) -> list[str]:
    return [row.key for row in advisories_for(version)]


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        # HyperPod's first AMI: every 24.11 row.
        (
            "24.11.0",
            [
                "slurm-24.11.1-reconfigure-split-brain",
                "slurm-24.11.5-second-takeover",
                "CVE-2025-43904",
                "slurm-security-2026-09",
            ],
        ),
        ("24.11.1", ["slurm-24.11.5-second-takeover", "CVE-2025-43904", "slurm-security-2026-09"]),
        ("24.11.4", ["slurm-24.11.5-second-takeover", "CVE-2025-43904", "slurm-security-2026-09"]),
        # The lab's releases: the September 2026 advisories only (no 24.11 fix was named).
        ("24.11.5", ["slurm-security-2026-09"]),
        ("25.11.7", ["slurm-security-2026-09"]),
        ("25.11.7-1", ["slurm-security-2026-09"]),
        ("23.11.10", ["CVE-2025-43904", "slurm-security-2026-09"]),
        ("23.11.11", ["slurm-security-2026-09"]),
        ("25.05.8", ["slurm-security-2026-09"]),
        # Fixed releases, and newer ones.
        ("25.05.9", []),
        ("25.11.8", []),
        ("26.05.3", ["slurm-security-2026-09"]),
        ("26.05.4", []),
        ("26.11.0", []),
        # Not a release: nothing is claimed.
        (None, []),
        ("unknown", []),
        ("24.11", []),
    ],
)
def test_each_row_applies_to_its_ranges_only(version: str | None, expected: list[str]) -> None:
    assert keys(version) == expected


def test_every_row_names_its_fix_and_its_source() -> None:
    for row in ADVISORIES:
        assert row.fixed_in
        assert row.sources
        assert row.what
        for fixed in row.fixed_in:
            assert not row.applies_to(fixed), row.key
        for first, fixed in row.affected:
            assert release_of(first) is not None
            assert release_of(fixed) is not None
            assert row.applies_to(first) or first == "0.0.0", row.key


def test_the_steps_that_walk_a_defect() -> None:
    reconfigure = walking("24.11.0", "reconfigure")
    assert reconfigure is not None
    assert reconfigure.key == "slurm-24.11.1-reconfigure-split-brain"
    assert walking("24.11.1", "reconfigure") is None
    takeover = walking("24.11.4", "takeover")
    assert takeover is not None
    assert takeover.key == "slurm-24.11.5-second-takeover"
    assert walking("24.11.5", "takeover") is None
    assert walking(None, "takeover") is None


def test_applying_names_the_releases_and_controllers() -> None:
    found = applying({"ctl1": "24.11.5", "ctl2": "25.11.7", "ctl3": None})
    assert [row.advisory.key for row in found] == ["slurm-security-2026-09"]
    assert (found[0].releases, found[0].controllers) == (("24.11.5", "25.11.7"), ("ctl1", "ctl2"))
    assert found[0].to_json()["releases"] == ["24.11.5", "25.11.7"]
    assert "aws/aws-parallelcluster issue 7601" in found[0].line()
    assert applying({"ctl1": "25.11.8"}) == []
