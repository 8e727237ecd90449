"""CONTRIBUTING's "Where things live" matches the tree: every file and folder it names in code
(``verdict/evaluation.py``, ``stack/hyperpod_ha_stack/``, ``embedded/shims/``) is there, so a
move or a rename cannot leave the guide behind."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAMED = re.compile(r"`([A-Za-z0-9_./<>*-]+(?:\.py|\.sh|\.json|\.yaml|/))`")
SKIPPED = {".venv", ".git", "__pycache__", ".aws-sam", ".test-logs", ".hypothesis"}


def section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def named_paths(text: str) -> list[str]:
    """The files and folders a text names in code; a pattern (``<name>``, ``*``) is left out."""
    return sorted({m for m in NAMED.findall(text) if "<" not in m and "*" not in m})


def tree() -> list[str]:
    found = []
    for directory, folders, files in os.walk(ROOT):
        folders[:] = [name for name in folders if name not in SKIPPED]
        here = Path(directory).relative_to(ROOT).as_posix()
        prefix = "" if here == "." else here + "/"
        found += [f"{prefix}{name}/" for name in folders] + [prefix + name for name in files]
    return found


def missing(named: list[str], paths: list[str]) -> list[str]:
    """Each name no path of the tree is or ends with (a name is relative to wherever it lives)."""
    return [name for name in named if not any(p == name or p.endswith("/" + name) for p in paths)]


def test_every_file_and_folder_where_things_live_names_exists() -> None:
    text = section((ROOT / "CONTRIBUTING.md").read_text(), "Where things live")
    named = named_paths(text)
    assert len(named) > 40  # the section names the tree, not a few examples
    assert missing(named, tree()) == []


def test_a_name_the_tree_lacks_is_found() -> None:
    named = named_paths("`state_table.py`, `unreachable_record.py`, `dev/hyperpod_ha_dev/`, `<feature>/x.py`")
    paths = ["layers/hyperpod_ha/state_table.py", "dev/hyperpod_ha_dev/"]
    assert missing(named, paths) == ["unreachable_record.py"]
