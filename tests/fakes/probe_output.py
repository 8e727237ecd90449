"""The controller probe's output for given sections: for tests of everything downstream."""

from __future__ import annotations

import json
from collections.abc import Iterable

from hyperpod_ha.slurm.probe_output import PROBE_MARK, PROBE_RESULT_PREFIX, ProbeSection


def format_probe_output(
    sections: Iterable[ProbeSection], *, nonce: str = "0123456789abcdef", complete: bool = True
) -> str:
    """``parse_probe_output(format_probe_output(s))`` gives ``s`` back.

    The real script's output has the same shape (a test runs both through the parser).
    """
    out = [f"{PROBE_MARK} probe begin version=1 nonce={nonce}"]
    summary: dict[str, list[int]] = {}
    for section in sections:
        out.append(f"{PROBE_MARK} {nonce} begin {section.name}")
        if section.text:
            out.extend(section.text.split("\n"))
        out.append(
            f"{PROBE_MARK} {nonce} end {section.name} rc={section.exit_code} ms={section.millis} "
            f"timed_out={int(section.timed_out)} truncated={int(section.truncated)}"
        )
        summary[section.name] = [section.exit_code, section.millis, int(section.timed_out)]
    if complete:
        result = {"version": 1, "nonce": nonce, "complete": True, "elapsed_ms": 0, "sections": summary}
        out.append(PROBE_RESULT_PREFIX + json.dumps(result, separators=(",", ":")))
    return "\n".join(out) + "\n"
