"""Where the embedded stack lives: moto's default account, the region every tool here uses, and
the fake credentials that reach only moto."""

from __future__ import annotations

from typing import Final

ACCOUNT: Final = "123456789012"
REGION: Final = "us-east-1"
CREDENTIALS: Final = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
}
