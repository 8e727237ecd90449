"""The failover topic's blind spot, as the probe's ``notify_failures`` section says it: HyperPod's
ON/OFF program appends every publish that failed to ``notification_attempts.log`` on the shared
file system; ``path=``, ``exists=yes|no``, ``now=``, ``mtime=`` (the last append), ``failures=``
(in the file's last 64 KiB) and ``last_failure=`` (the last such line), or ``error=`` when the
file's place is not known. Never raises: a field out of its form is unknown."""

from __future__ import annotations

from dataclasses import dataclass

from hyperpod_ha.slurm.text import excerpt, key_values, yes_no


@dataclass(frozen=True)
class NotifyFailures:
    path: str | None = None
    exists: bool | None = None
    failures: int | None = None  # failed publishes in the file's last 64 KiB
    last_failure: str | None = None
    age_seconds: int | None = None  # since the file last changed (its last failed publish)
    error: str | None = None


def parse_notify_failures(text: str) -> NotifyFailures:
    values = dict(key_values(text))
    now, mtime = _number(values.get("now")), _number(values.get("mtime"))
    return NotifyFailures(
        path=_text(values.get("path")),
        exists=yes_no(values.get("exists")),
        failures=_number(values.get("failures")),
        last_failure=_text(values.get("last_failure")),
        age_seconds=max(now - mtime, 0) if now is not None and mtime is not None else None,
        error=_text(values.get("error")),
    )


def _number(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and len(value) <= 12 else None


def _text(value: str | None) -> str | None:
    return excerpt(value) if value else None
