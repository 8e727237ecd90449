"""A stand-in of KMS for encrypted sessions: GenerateDataKey and Decrypt with encryption context.

The ciphertext is the data key sealed with the key's own AES-GCM key and the encryption context
as associated data, so a Decrypt with another context (a missing ``aws:ssm:RandomChallenge``,
another session id) or under another key fails with ``InvalidCiphertextException``, as KMS's.
Every call is recorded (operation, key, the context's keys and values)."""

from __future__ import annotations

import base64
import json
import os
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

ACCOUNT = "111122223333"
REGION = "eu-west-1"


class KmsError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class KmsStandIn:
    keys: dict[str, bytes] = field(default_factory=dict)  # key ARN -> its sealing key
    calls: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def create_key(self) -> str:
        arn = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/{uuid.uuid4()}"
        self.keys[arn] = AESGCM.generate_key(bit_length=256)
        return arn

    def _key(self, key_id: object) -> str:
        for arn in self.keys:
            if key_id in (arn, arn.rsplit("/", 1)[1]):
                return arn
        raise KmsError("NotFoundException", f"Key '{key_id}' does not exist")

    def handle(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        context = request.get("EncryptionContext") or {}
        with self._lock:
            self.calls.append(
                {"operation": operation, "KeyId": request.get("KeyId"), "EncryptionContext": context}
            )
        aad = json.dumps(context, sort_keys=True).encode()
        if operation == "GenerateDataKey":
            arn = self._key(request.get("KeyId"))
            size = int(request.get("NumberOfBytes") or 32)
            plain = os.urandom(size)
            nonce = os.urandom(12)
            index = list(self.keys).index(arn).to_bytes(1, "big")
            blob = index + nonce + AESGCM(self.keys[arn]).encrypt(nonce, plain, aad)
            return {
                "CiphertextBlob": base64.b64encode(blob).decode(),
                "Plaintext": base64.b64encode(plain).decode(),
                "KeyId": arn,
            }
        if operation == "Decrypt":
            blob = base64.b64decode(request.get("CiphertextBlob") or "")
            arns = list(self.keys)
            if not blob or blob[0] >= len(arns):
                raise KmsError("InvalidCiphertextException", "not a ciphertext of this KMS")
            arn = arns[blob[0]]
            if request.get("KeyId") and self._key(request["KeyId"]) != arn:
                raise KmsError("IncorrectKeyException", "the ciphertext was made under another key")
            try:
                plain = AESGCM(self.keys[arn]).decrypt(blob[1:13], blob[13:], aad)
            except InvalidTag:
                raise KmsError(
                    "InvalidCiphertextException", "the encryption context does not match"
                ) from None
            return {"Plaintext": base64.b64encode(plain).decode(), "KeyId": arn}
        raise KmsError("UnsupportedOperationException", f"the stand-in has no {operation}")
