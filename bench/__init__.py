"""``make bench``: cold start, package size, event storm, workflow cost and time to verdict.

Every figure is a ratio or a count taken in one run (the machine is shared and noisy), with
its target and whether it is met; ``python -m bench`` writes them to ``bench/results.json``
and prints a short table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
BUILD_DIR: Final = ROOT / ".aws-sam" / "build"
TEMPLATE: Final = ROOT / "template.yaml"
RESULTS: Final = Path(__file__).resolve().parent / "results.json"
REGION: Final = "us-east-1"
