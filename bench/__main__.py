"""``python -m bench`` (``make bench``): run every measurement, write bench/results.json, print a table.

Exit status 1 when a measurement broke (a bench or build problem); missed targets are results,
reported in the file and the table, not failures.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import (
    BUILD_DIR,
    RESULTS,
    ROOT,
    cold_start,
    embedded_stack,
    input_parsing,
    lab_chaos,
    lab_early_warning,
    lab_restore,
    lab_timings,
    lab_verdict,
    package_size,
    storm,
    watchdog_cost,
    workflow_cost,
)
from bench.console import quiet_stdout
from bench.report import assemble, errors, format_table, problems


def newest_source(root: Path = ROOT) -> float:
    """The latest change to what ``sam build`` builds from."""
    sources = [root / "template.yaml", *(root / "functions").rglob("*.py"), *(root / "layers").rglob("*")]
    return max(path.stat().st_mtime for path in sources if path.is_file() and "__pycache__" not in path.parts)


def build_stale(build: Path = BUILD_DIR, root: Path = ROOT) -> bool:
    built = build / "template.yaml"
    return not built.exists() or built.stat().st_mtime < newest_source(root)


def _run(name: str, measurement: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    print(f"bench: {name} ...", file=sys.stderr, flush=True)
    started = time.monotonic()
    try:
        with quiet_stdout():
            result = measurement()
    except Exception as error:
        traceback.print_exc(file=sys.stderr)
        result = {"error": f"{type(error).__name__}: {error}"}
    result["seconds"] = result.get("seconds", round(time.monotonic() - started, 1))
    print(f"bench: {name} done in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return result


def main() -> int:
    started = time.monotonic()
    stale = build_stale()
    if stale:
        print(
            "bench: .aws-sam/build is older than the sources: run `make build` (make bench does)",
            file=sys.stderr,
        )
    parts = {
        "package_size": _run("package size", package_size.measure),
        "cold_start": _run("cold start", cold_start.measure),
        "storm": _run("event storm", storm.measure),
        "input_parsing": _run("hostile input parsing", input_parsing.measure),
        "workflow_cost": _run("workflow cost", workflow_cost.measure),
        "watchdog_cost": _run("watchdog cost", watchdog_cost.measure),
        "lab_timings": _run("lab build, bring-up and takeover", lab_timings.measure),
        "lab_verdict": _run("lab time to verdict", lab_verdict.measure),
        "lab_restore": _run("lab restore of redundancy", lab_restore.measure),
        "lab_chaos": _run("lab chaos run (20 min)", lab_chaos.measure),
        "lab_early_warning": _run("lab early warnings (8 min)", lab_early_warning.measure),
        "embedded_stack": _run("embedded stack creation", embedded_stack.measure),
    }
    meta = {
        "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "build_dir": str(BUILD_DIR.relative_to(ROOT)),
        "build_stale": stale,
        "note": (
            "Ratios and counts taken in one run on a shared machine; the layer's arm64 extension "
            "modules cannot load on an x86_64 machine, where their packages fall back to pure Python."
            if platform.machine() != "aarch64"
            else "Ratios and counts taken in one run on a shared machine."
        ),
        "seconds": round(time.monotonic() - started, 1),
    }
    results = assemble(meta, parts)
    shape = problems(results)
    if shape:
        results["meta"]["problems"] = shape
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=False) + "\n")
    print(format_table(results))
    print(f"results: {RESULTS.relative_to(ROOT)} ({results['meta']['seconds']:.0f} s)")
    broken = errors(results) + shape
    for problem in broken:
        print(f"bench: {problem}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
