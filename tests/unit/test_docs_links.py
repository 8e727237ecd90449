"""Every relative link in the README, CONTRIBUTING and docs/*.md reaches a file that exists and,
with a #fragment, a heading of that file (GitHub's anchors), so moving a section cannot leave a
link behind."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def pages(root: Path) -> list[Path]:
    return [root / "README.md", root / "CONTRIBUTING.md", *sorted((root / "docs").glob("*.md"))]


def _prose(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in _prose(path.read_text()):
        match = HEADING.match(line)
        if match:
            slug = anchor(match.group(2))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(root: Path) -> list[str]:
    broken = []
    for page in pages(root):
        if not page.exists():
            continue
        for line in _prose(page.read_text()):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue  # https:, mailto:: not a file of the repository
                file_part, _, fragment = target.partition("#")
                linked = (page.parent / file_part).resolve() if file_part else page
                where = f"{page.relative_to(root)}: {target}"
                if not linked.exists():
                    broken.append(f"{where}: no such file")
                elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
                    broken.append(f"{where}: no such heading")
    return broken


def test_every_relative_link_reaches_a_file_and_heading() -> None:
    assert broken_links(ROOT) == []


def test_the_pages_link_to_each_other() -> None:
    readme = (ROOT / "README.md").read_text()
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"](docs/{page.name})" in readme, f"the README does not link {page.name}"


def test_a_missing_file_or_heading_is_found(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    page = "# Operations\n\n## What `status` shows\n\n```\n## not a heading\n```\n"
    (tmp_path / "docs" / "ops.md").write_text(page)
    (tmp_path / "README.md").write_text(
        "[ok](docs/ops.md#what-status-shows) [top](#hyperpod) [gone](docs/nope.md)\n"
        "[code](docs/ops.md#not-a-heading) [web](https://example.com/x.md)\n\n# hyperpod\n"
    )
    assert broken_links(tmp_path) == [
        "README.md: docs/nope.md: no such file",
        "README.md: docs/ops.md#not-a-heading: no such heading",
    ]


def test_anchors_follow_github() -> None:
    assert anchor("Snapshots: retention and the interval") == "snapshots-retention-and-the-interval"
    assert anchor("template.yaml") == "templateyaml"
    assert anchor("IAM, statement by statement") == "iam-statement-by-statement"
    assert anchor("The Slurm lab (real daemons)") == "the-slurm-lab-real-daemons"
    assert anchor("hyperpod-ha configure") == "hyperpod-ha-configure"
