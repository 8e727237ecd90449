"""The settings of the command transports: the KMS key of encrypted sessions (``SessionKmsKeyArn``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Final

from hyperpod_ha.environment import OptionalText, Settings

KEY_ARN: Final = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/(?P<id>[A-Za-z0-9-]{1,128})$")


@dataclass(frozen=True)
class _KeyArn(OptionalText):
    def parse(self, raw: str) -> str | None:
        value = super().parse(raw)
        if value is not None and not KEY_ARN.match(value):
            raise self.refused("is not a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>)")
        return value


@dataclass(frozen=True)
class SessionEncryptionSettings(Settings):
    """The template's ``SessionKmsKeyArn`` (empty: encrypted sessions are refused)."""

    key_arn: Annotated[str | None, _KeyArn("SESSION_KMS_KEY_ARN")] = None
