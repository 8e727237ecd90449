"""Keeping the SDK's wire logs out of the rotation function's logs.

botocore logs request and response bodies at DEBUG, and those bodies hold the secret
(GetSecretValue, PutSecretValue). Whatever LOG_LEVEL or a root logger says, the function
never lets them out: the SDK's loggers get their own level, INFO at the lowest.
"""

from __future__ import annotations

import logging

_WIRE_LOGGERS = ("botocore", "boto3", "urllib3")


def silence_sdk_wire_logs() -> None:
    for name in _WIRE_LOGGERS:
        wire = logging.getLogger(name)
        if wire.level < logging.INFO:  # NOTSET (0) inherits, possibly DEBUG
            wire.setLevel(logging.INFO)
