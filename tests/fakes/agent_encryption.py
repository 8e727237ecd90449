"""The agent's side of a KMS-encrypted session, as AWS's agent does it (``crypto/blockcipher.go``,
``datachannel.go``): a random challenge in the KMSEncryption action, kms:Decrypt of the client's
data key with the encryption context (``aws:ssm:RandomChallenge`` only when the client
acknowledged it), the first half of the key encrypting Output, StdErr and ExitCode, the second
decrypting the client's, and an EncChallengeRequest the client must answer."""

from __future__ import annotations

import base64
import json
import os
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient

NONCE = 12


class AgentCipher:
    def __init__(self, data_key: bytes) -> None:
        self._to_client = AESGCM(data_key[:32])
        self._from_client = AESGCM(data_key[32:])

    def encrypt(self, plain: bytes) -> bytes:
        nonce = os.urandom(NONCE)
        return nonce + self._to_client.encrypt(nonce, plain, None)

    def decrypt(self, sealed: bytes) -> bytes:
        return self._from_client.decrypt(sealed[:NONCE], sealed[NONCE:], None)


class AgentEncryption:
    """One session's encryption on the agent's side; ``kms`` decrypts the client's data key."""

    def __init__(self, kms: KMSClient, key_id: str, session_id: str, target_id: str) -> None:
        self._kms = kms
        self.key_id = key_id
        self._session_id = session_id
        self._target_id = target_id
        self.random_challenge = base64.b64encode(os.urandom(16)).decode()
        self.challenge = os.urandom(64)
        self.cipher: AgentCipher | None = None
        self.encryption_context: dict[str, str] = {}

    def action(self, *, with_challenge: bool) -> dict[str, Any]:
        parameters: dict[str, str] = {"KMSKeyId": self.key_id}
        if with_challenge:
            parameters["Challenge"] = self.random_challenge
        return {"ActionType": "KMSEncryption", "ActionParameters": parameters}

    def finalize(self, result: object, *, require_challenge_response: bool) -> str | None:
        """Take the client's ActionResult; the agent's error text when it refuses."""
        if not isinstance(result, dict) or not isinstance(result.get("KMSCipherTextKey"), str):
            return "malformed KMSEncryption result"
        acknowledged = result.get("ChallengeAcknowledgement") is True
        if require_challenge_response and not acknowledged:
            return "client does not support required encryption context random challenge"
        self.encryption_context = {"aws:ssm:SessionId": self._session_id, "aws:ssm:TargetId": self._target_id}
        if acknowledged:
            self.encryption_context["aws:ssm:RandomChallenge"] = self.random_challenge
        try:
            plain = self._kms.decrypt(
                CiphertextBlob=base64.b64decode(result["KMSCipherTextKey"]),
                EncryptionContext=self.encryption_context,
                KeyId=self.key_id,
            )["Plaintext"]
        except Exception as error:  # the agent says "Fetching data key failed" whatever KMS said
            return f"Fetching data key failed: {type(error).__name__}"
        self.cipher = AgentCipher(plain)
        return None

    def challenge_request(self) -> bytes:
        assert self.cipher is not None
        return json.dumps(
            {"Challenge": base64.b64encode(self.cipher.encrypt(self.challenge)).decode()}
        ).encode()

    def challenge_answered(self, payload: bytes) -> bool:
        assert self.cipher is not None
        answer = base64.b64decode(json.loads(payload)["Challenge"])
        return self.cipher.decrypt(answer) == self.challenge
