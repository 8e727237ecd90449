"""Known-bad Slurm releases: what breaks, in which releases, the release that fixes it, the source.

One row per defect or advisory. A row's ``affected`` ranges are ``[first, fixed)`` per release
series; a version in none of them (an unknown series, a newer release) is not affected. ``walks``
names the step of ours that walks into the defect: ``reconfigure`` (the drill's ``scontrol
reconfigure`` on the new active controller, which re-registers it with slurmdbd) and
``takeover`` (a takeover while the defect is there: the drill's, the restore's hand-back).
Only rows whose defect breaks HA or whose fix is a security advisory are here; a release not in
a row is not known to be good, only not known to be bad.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

Release = tuple[int, int, int]
Step = Literal["reconfigure", "takeover"]

_VERSION = re.compile(r"([0-9]{1,4})\.([0-9]{1,4})\.([0-9]{1,4})")


def release_of(version: str | None) -> Release | None:
    """``24.11.5`` (or ``24.11.5-1``, ``slurm 24.11.5``) -> (24, 11, 5); None when not a release."""
    found = _VERSION.search(version or "")
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


def _release(text: str) -> Release:
    found = release_of(text)
    assert found is not None, text
    return found


@dataclass(frozen=True)
class Advisory:
    key: str  # a stable name: the CVE ids, or slurm-<fixed release>-<defect>
    what: str  # what breaks, in a sentence
    affected: tuple[tuple[str, str], ...]  # [first, fixed) per series
    fixed_in: tuple[str, ...]
    sources: tuple[str, ...]
    walks: Step | None = None

    def applies_to(self, version: str | None) -> bool:
        found = release_of(version)
        return found is not None and any(
            _release(first) <= found < _release(fixed) for first, fixed in self.affected
        )

    def to_json(self) -> dict[str, object]:
        return {
            "advisory": self.key,
            "what": self.what,
            "fixed_in": list(self.fixed_in),
            "sources": list(self.sources),
        }


_CHANGELOG_24_11 = "SchedMD's CHANGELOG/slurm-24.11.md"
SEPTEMBER_2026: Final = (
    "CVE-2026-65107",
    "CVE-2026-65108",
    "CVE-2026-65109",
    "CVE-2026-65138",
    "CVE-2026-65139",
    "CVE-2026-65140",
    "CVE-2026-65165",
    "CVE-2026-65168",
)

ADVISORIES: Final = (
    Advisory(
        key="slurm-24.11.1-reconfigure-split-brain",
        what=(
            "crash and possible split brain if the backup controller handles an scontrol reconfigure "
            "while in control before the primary resumes operation"
        ),
        affected=(("24.11.0", "24.11.1"),),
        fixed_in=("24.11.1",),
        sources=(f"{_CHANGELOG_24_11} (changes in 24.11.1)",),
        walks="reconfigure",
    ),
    Advisory(
        key="slurm-24.11.5-second-takeover",
        what="the backup slurmctld fails on its second takeover",
        affected=(("24.11.0", "24.11.5"),),
        fixed_in=("24.11.5",),
        sources=(f"{_CHANGELOG_24_11} (changes in 24.11.5)",),
        walks="takeover",
    ),
    Advisory(
        key="CVE-2025-43904",
        what="security advisory (accounting: a coordinator can raise privileges)",
        affected=(("23.11.0", "23.11.11"), ("24.11.0", "24.11.5")),
        fixed_in=("23.11.11", "24.11.5"),
        sources=("openhpc/ohpc pull requests 2137 and 2138",),
    ),
    Advisory(
        key="slurm-security-2026-09",
        what=f"security advisories {', '.join(SEPTEMBER_2026)} (sbcast, slurmstepd, slurmd RPCs, accounting)",
        # Every release before the fixed ones; 24.11 and older series have no fixed release.
        affected=(("0.0.0", "25.05.9"), ("25.11.0", "25.11.8"), ("26.05.0", "26.05.4")),
        fixed_in=("25.05.9", "25.11.8", "26.05.4"),
        sources=(
            "aws/aws-parallelcluster issue 7601",
            "GoogleCloudPlatform/cluster-toolkit pull request 6264",
            "openhpc/ohpc pull request 2686",
        ),
    ),
)


def advisories_for(version: str | None) -> list[Advisory]:
    """Every row that applies to ``version``."""
    return [row for row in ADVISORIES if row.applies_to(version)]


def walking(version: str | None, step: Step) -> Advisory | None:
    """The first row that applies to ``version`` and that ``step`` walks into."""
    return next((row for row in advisories_for(version) if row.walks == step), None)


@dataclass(frozen=True)
class AppliedAdvisory:
    """A row that applies to a cluster: the releases and controllers it applies to."""

    advisory: Advisory
    releases: tuple[str, ...]
    controllers: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        where = {"releases": list(self.releases), "controllers": list(self.controllers)}
        return {**self.advisory.to_json(), **where}

    def line(self) -> str:
        """One line for a person."""
        row = self.advisory
        return (
            f"Slurm {', '.join(self.releases)} ({', '.join(self.controllers)}): {row.key}: {row.what} "
            f"(fixed in {', '.join(row.fixed_in)}; {'; '.join(row.sources)})"
        )


def applying(versions: Mapping[str, str | None]) -> list[AppliedAdvisory]:
    """The rows that apply to the controllers' releases (controller -> version), in the table's order."""
    found: list[AppliedAdvisory] = []
    for row in ADVISORIES:
        hit = sorted((name, v) for name, v in versions.items() if v and row.applies_to(v))
        if hit:
            releases = tuple(sorted({v for _, v in hit}))
            found.append(AppliedAdvisory(row, releases, tuple(name for name, _ in hit)))
    return found
