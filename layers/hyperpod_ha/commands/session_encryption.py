"""KMS-encrypted Session Manager sessions: the data key, AES-256-GCM both ways, the challenge.

When the account's Session Manager preferences name a KMS key, the agent's HandshakeRequest
carries a ``KMSEncryption`` action (``KMSKeyId``, and from newer agents a random
``Challenge``). The client then, as AWS's plugin does:

1. asks KMS for a 64-byte data key under the key the operator named (``SessionKmsKeyArn``),
   with the encryption context ``aws:ssm:SessionId`` and ``aws:ssm:TargetId`` (the
   StartSession target, as the plugin uses), plus ``aws:ssm:RandomChallenge`` when the agent
   sent one; it answers with the key's ciphertext and ``ChallengeAcknowledgement`` (an agent
   with ``RequireKMSChallengeResponse`` refuses a client that does not acknowledge);
2. decrypts the agent's Output, StdErr and ExitCode payloads with the key's first 32 bytes
   and encrypts its own input with the last 32 (``nonce(12) + ciphertext + tag``);
3. answers the agent's EncChallengeRequest: decrypt with the first half, encrypt with the
   second (the agent's ``crypto/blockcipher.go`` and ``datachannel.go``).

The plaintext key lives only in the two ciphers; nothing here logs or shows it.
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import BotoCoreError, ClientError
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.commands import AccessDenied, CommandError, EncryptionRequired, ProtocolError, Throttled
from hyperpod_ha.commands.settings import KEY_ARN, SessionEncryptionSettings
from hyperpod_ha.commands.ssm_errors import DENIED_CODES, THROTTLED_CODES
from hyperpod_ha.environment import Environment
from hyperpod_ha.json_input import load_json

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient

DATA_KEY_BYTES: Final = 64  # the agent's KMSKeySizeInBytes: two AES-256 keys
NONCE_BYTES: Final = 12
KEY_PARAMETER: Final = "SessionKmsKeyArn"  # the stack parameter an operator sets
# A challenge is 64 random bytes; the agent's random challenge 16, base64. Bounded far above both.
_MAX_CHALLENGE_CHARS: Final = 1024
_ENCRYPTED_OUTPUT: Final = frozenset({1, 11, 12})  # Output, StdErr, ExitCode: what the agent encrypts


class SessionCipher:
    """The two AES-256-GCM keys of one session (agent to client, client to agent)."""

    def __init__(self, data_key: bytes) -> None:
        if len(data_key) != DATA_KEY_BYTES:
            raise ProtocolError(f"KMS returned a data key of {len(data_key)} bytes, not {DATA_KEY_BYTES}")
        half = DATA_KEY_BYTES // 2
        self._from_agent = AESGCM(data_key[:half])
        self._to_agent = AESGCM(data_key[half:])

    def __repr__(self) -> str:
        return "SessionCipher(<keys hidden>)"

    @staticmethod
    def encrypts(payload_type: int) -> bool:
        return payload_type in _ENCRYPTED_OUTPUT

    def decrypt(self, payload: bytes) -> bytes:
        if len(payload) < NONCE_BYTES + 16:
            raise ProtocolError("encrypted payload shorter than its nonce and tag")
        try:
            return self._from_agent.decrypt(payload[:NONCE_BYTES], payload[NONCE_BYTES:], None)
        except InvalidTag:
            raise ProtocolError("encrypted payload failed authentication (wrong key or altered)") from None

    def encrypt(self, plain: bytes) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._to_agent.encrypt(nonce, plain, None)

    def answer_challenge(self, payload: bytes) -> bytes:
        """The EncChallengeResponse payload for an EncChallengeRequest payload."""
        request = load_json(payload, ProtocolError, what="the encryption challenge")
        challenge = request.get("Challenge") if isinstance(request, dict) else None
        if not isinstance(challenge, str) or not 0 < len(challenge) <= _MAX_CHALLENGE_CHARS:
            raise ProtocolError("malformed encryption challenge")
        try:
            sealed = base64.b64decode(challenge, validate=True)
        except binascii.Error:
            raise ProtocolError("encryption challenge is not base64") from None
        answer = base64.b64encode(self.encrypt(self.decrypt(sealed))).decode()
        return f'{{"Challenge":"{answer}"}}'.encode()


@dataclass(frozen=True)
class EncryptionAgreed:
    """What the handshake's KMSEncryption action yields: the answer's ActionResult and the cipher."""

    action_result: dict[str, Any] = field(repr=False)
    cipher: SessionCipher = field(repr=False)


def _key_id(key: str) -> str:
    found = KEY_ARN.match(key)
    return found["id"] if found else key


class SessionDataKeys:
    """Data keys for encrypted sessions under the one key the operator named."""

    def __init__(self, kms: KMSClient, key_arn: str) -> None:
        self._kms = kms
        self.key_arn = key_arn

    def agree(self, parameters: object, session_id: str, target: str) -> EncryptionAgreed:
        """Accept the agent's KMSEncryption action (its ``ActionParameters``)."""
        if not isinstance(parameters, dict):
            raise ProtocolError(f"session {session_id}: malformed KMSEncryption action")
        requested = str(parameters.get("KMSKeyId") or "")[:2048]
        challenge = parameters.get("Challenge")
        if requested and not requested.startswith("alias/") and _key_id(requested) != _key_id(self.key_arn):
            # An alias cannot be compared here; KMS and the agent's Decrypt decide then.
            raise EncryptionRequired(
                f"session {session_id}: the session is encrypted with KMS key {requested[:300]}, "
                f"but {KEY_PARAMETER} names {self.key_arn}"
            )
        context = {"aws:ssm:SessionId": session_id, "aws:ssm:TargetId": target}
        if isinstance(challenge, str) and challenge:
            context["aws:ssm:RandomChallenge"] = challenge[:_MAX_CHALLENGE_CHARS]
        try:
            response = self._kms.generate_data_key(
                KeyId=self.key_arn, NumberOfBytes=DATA_KEY_BYTES, EncryptionContext=context
            )
        except (ClientError, BotoCoreError) as error:
            raise _kms_error(error, session_id, self.key_arn) from None
        result: dict[str, Any] = {
            "KMSCipherTextKey": base64.b64encode(response["CiphertextBlob"]).decode(),
            "ChallengeAcknowledgement": "aws:ssm:RandomChallenge" in context,
        }
        return EncryptionAgreed(result, SessionCipher(response["Plaintext"]))


def _kms_error(error: ClientError | BotoCoreError, session_id: str, key_arn: str) -> CommandError:
    what = f"session {session_id}: kms:GenerateDataKey on {key_arn} ({KEY_PARAMETER})"
    if isinstance(error, BotoCoreError):
        return CommandError(f"{what} could not reach KMS ({type(error).__name__})")
    code = error_code(error)
    message = str(error.response.get("Error", {}).get("Message", ""))[:300]
    if code in DENIED_CODES:
        return AccessDenied(f"{what} was denied: {message}")
    if code in THROTTLED_CODES:
        return Throttled(f"{what} was throttled")
    return EncryptionRequired(f"{what} failed: {code}: {message}".rstrip(": "))


def session_data_keys(env: Environment | None = None) -> SessionDataKeys | None:
    """The data keys of the configured key, or None when no key is configured."""
    key_arn = SessionEncryptionSettings.from_environment(env).key_arn
    if key_arn is None:
        return None
    import boto3

    return SessionDataKeys(boto3.client("kms"), key_arn)
