"""Redaction: secret-looking keys, secrets inside text, URL credentials; linear on huge outputs."""

from __future__ import annotations

import json

import pytest

from hyperpod_ha import redaction


def test_secrets_are_redacted_by_key_and_inside_text() -> None:
    evidence = {
        "slurmdbd": {
            "StoragePass": "hunter2-db",
            "conf": "StorageUser=slurm\nStoragePass=hunter2-conf\nStorageHost=db",
            "secret": {"username": "admin", "password": "hunter2-json"},
        },
        "session": {"TokenValue": "tok-abc", "StreamUrl": "wss://ssmmessages"},
        "stdout": 'config {"password": "hunter 2 spaced", "port": 3306} and mysql://admin:hunter2-url@db:3306/x',
        "checks_passed": True,
    }
    redacted = redaction.redact(evidence)
    text = json.dumps(redacted)
    for secret in ("hunter2-db", "hunter2-conf", "hunter2-json", "tok-abc", "hunter 2 spaced", "hunter2-url"):
        assert secret not in text
    assert redacted["slurmdbd"]["StoragePass"] == "[redacted]"
    assert redacted["slurmdbd"]["secret"] == "[redacted]"
    assert "StorageUser=slurm" in redacted["slurmdbd"]["conf"]
    assert "StoragePass=[redacted]" in redacted["slurmdbd"]["conf"]
    assert '"password": "[redacted]", "port": 3306' in redacted["stdout"]
    assert "mysql://admin:[redacted]@db:3306/x" in redacted["stdout"]
    assert redacted["checks_passed"] is True
    assert redacted["session"]["StreamUrl"] == "wss://ssmmessages"


@pytest.mark.parametrize("text", ["x:" * 50_000, "c" * 200_000, "a=b " * 30_000, 'password="' * 20_000])
def test_scrubbing_huge_output_stays_linear(text: str) -> None:
    # A quadratic scan would hang here (each of these took minutes with a naive pattern).
    scrubbed = redaction.scrub_text(text)
    assert len(scrubbed) <= len(text) + len(redaction.REDACTED) * 40_000
