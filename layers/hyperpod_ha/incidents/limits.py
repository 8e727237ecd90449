"""OpsCenter's and Incident Manager's size limits, and cutting text to them."""

from __future__ import annotations

# OpsCenter limits (CreateOpsItem API reference).
OPERATIONAL_DATA_VALUE_LIMIT = 20 * 1024  # bytes per value
DESCRIPTION_LIMIT = 2048
TITLE_LIMIT = 1024
KEY_LIMIT = 128
# Each evidence entry may be up to 20 KB; this bounds the whole request too.
MAX_EVIDENCE_ENTRIES = 25
# Incident Manager limits (StartIncident).
INCIDENT_TITLE_LIMIT = 200
INCIDENT_RAW_DATA_LIMIT = 10_000


def bounded(text: str, limit: int = OPERATIONAL_DATA_VALUE_LIMIT) -> str:
    """``text`` cut to ``limit`` UTF-8 bytes, with a note saying so when it was cut."""
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text
    note = f"\n[truncated by hyperpod-ha: {{kept}} of {len(encoded)} bytes kept; the run's history has all]"
    keep = limit - len(note.format(kept=limit).encode("utf-8"))
    kept = encoded[:keep].decode("utf-8", "ignore")
    return kept + note.format(kept=len(kept.encode("utf-8")))


def bounded_chars(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (the limits AWS counts in characters)."""
    if len(text) <= limit:
        return text
    note = " [truncated]"
    return text[: limit - len(note)] + note
