"""The README's sample page is what ``hyperpod-ha simulate both-down --messages`` prints: the
same subject, attributes and body, but for what differs from run to run (times, ages, ids, the
simulated controllers' temporary paths)."""

from __future__ import annotations

import json
import re

import pytest

from hyperpod_ha_cli.main import main
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

VOLATILE = (
    (re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC"), "<time>"),
    (re.compile(r"(?:\d+ (?:d|h|min|s) )+ago"), "<age> ago"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"ml-cluster-[0-9a-f]{20}"), "<execution>"),
    (re.compile(r"backup-[0-9a-f]{8,17}"), "<backup>"),
    (re.compile(r"/tmp/hyperpod-ha-sim-[A-Za-z0-9_]+"), "<simulated>"),
)


def normalized(text: str) -> str:
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return text.strip()


def readme_page() -> str:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```text\nSubject: [hyperpod-ha] ml-cluster: DOWN") + len("```text\n")
    return readme[start : readme.index("```", start)]


def test_the_readme_page_is_what_simulate_messages_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "both-down", "--messages", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    # Beside the page: the simulated controllers' release (22.05.8) is one a Slurm advisory names,
    # told once by its own severity-4 notice.
    kinds = sorted(m["attributes"]["kind"] for m in printed["messages"])
    assert kinds == ["DOWN", "slurm-advisory"]
    (sent,) = [m for m in printed["messages"] if m["attributes"]["kind"] == "DOWN"]
    attributes = " ".join(f"{name}={value}" for name, value in sent["attributes"].items())
    page = f"Subject: {sent['subject']}\nAttributes: {attributes}\n\n{sent['body']}"
    assert normalized(readme_page()) == normalized(page)
    (item,) = printed["ops_items"]
    assert (item["severity"], item["status"]) == ("1", "Open")
    assert json.loads(item["operational_data"]["/aws/dedup"]) == {
        "dedupString": "hyperpod-ha:ml-cluster:DOWN"
    }


def test_the_volatile_parts_are_all_that_is_left_out() -> None:
    assert normalized("Detected: 2026-12-04 01:26 UTC, 5 min 2 s ago, backup-0780822e") == (
        "Detected: <time>, <age> ago, <backup>"
    )
    assert normalized("ctl1 answers") == "ctl1 answers"
