"""Where a cold start's import time goes: ``python -X importtime``, parsed and ranked."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from bench.cold_start_launch import (
    ColdStartError,
    Launch,
    run_child,
)
from bench.stats import median

TOP_IMPORTS: Final = 10


@dataclass(frozen=True)
class ImportLine:
    """One line of ``python -X importtime``."""

    module: str
    self_us: int
    cumulative_us: int
    depth: int


_IMPORTTIME = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|( *)(\S.*)$")


def parse_importtime(stderr: str) -> list[ImportLine]:
    """The ``import time:`` lines of one run; the header and other output are skipped."""
    lines = []
    for raw in stderr.splitlines():
        match = _IMPORTTIME.match(raw)
        if match is None:
            continue
        self_us, cumulative_us, indent, module = match.groups()
        # One space after the bar, then two per nesting level.
        depth = max(0, (len(indent) - 1) // 2)
        lines.append(ImportLine(module.strip(), int(self_us), int(cumulative_us), depth))
    return lines


def top_imports(runs: Sequence[Sequence[ImportLine]], count: int = TOP_IMPORTS) -> list[dict[str, Any]]:
    """The ``count`` imports with the largest median cumulative time over ``runs``."""
    cumulative: dict[str, list[int]] = {}
    own: dict[str, list[int]] = {}
    depth: dict[str, int] = {}
    for lines in runs:
        for line in lines:
            cumulative.setdefault(line.module, []).append(line.cumulative_us)
            own.setdefault(line.module, []).append(line.self_us)
            depth.setdefault(line.module, line.depth)
    ranked = sorted(cumulative, key=lambda module: median(cumulative[module]), reverse=True)[:count]
    return [
        {
            "module": module,
            "cumulative_ms": round(median(cumulative[module]) / 1000, 1),
            "self_ms": round(median(own[module]) / 1000, 1),
            "depth": depth[module],
        }
        for module in ranked
    ]


def importtime(launch: Launch) -> list[ImportLine]:
    """One ``-X importtime`` run: the imports that succeeded (failed attempts are logged too)."""
    done = run_child(launch, "-X", "importtime")
    if done.returncode != 0:
        raise ColdStartError(f"{launch.name}: the import failed under -X importtime")
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1])["modules"])
    return [line for line in parse_importtime(done.stderr) if line.module in loaded]
