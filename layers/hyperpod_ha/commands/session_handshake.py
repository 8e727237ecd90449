"""The client's answer to the agent's HandshakeRequest (payload type 5).

Every requested action gets an answer, as the plugin gives one (``streaming.go``,
``handleHandshakeRequest``): the agent ends a session whose answer holds a status other
than 1 and says why, whereas a client that does not answer leaves it waiting. The session
type of a command document is accepted; KMS encryption is accepted with a data key under the
operator's ``SessionKmsKeyArn`` (``session_encryption``) and answered "failed", naming that
parameter, when none is configured or KMS refuses; any other action is "unsupported". The
failure to raise once the answer is delivered travels with it, and so does the agreed cipher.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from hyperpod_ha.commands import CommandError, EncryptionRequired, ProtocolError
from hyperpod_ha.commands.session_encryption import KEY_PARAMETER, SessionCipher, SessionDataKeys
from hyperpod_ha.json_input import load_json

ACTION_SUCCESS: Final = 1
ACTION_FAILED: Final = 2
ACTION_UNSUPPORTED: Final = 3
COMMAND_SESSION_TYPES: Final = frozenset({"NonInteractiveCommands", "InteractiveCommands"})


@dataclass(frozen=True)
class HandshakeAnswer:
    response: dict[str, Any]  # the HandshakeResponse payload (payload type 6)
    failure: CommandError | None  # raised once the response is delivered; None: go on
    agent_version: str | None
    cipher: SessionCipher | None = field(default=None, repr=False)  # set when encryption was agreed


def _processed(
    action_type: str, status: int, error: str = "", result: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {"ActionType": action_type, "ActionStatus": status, "ActionResult": result, "Error": error}


def answer_handshake(
    payload: bytes,
    session_id: str,
    client_version: str,
    *,
    target: str = "",
    data_keys: SessionDataKeys | None = None,
) -> HandshakeAnswer:
    """Build the HandshakeResponse for ``payload``; :class:`ProtocolError` if it is not a request.

    A KMSEncryption action calls KMS (``data_keys``): run it off the event loop."""
    try:
        request = load_json(payload, ProtocolError)
    except ProtocolError:
        raise ProtocolError(f"session {session_id}: handshake request payload is not JSON") from None
    actions = request.get("RequestedClientActions") if isinstance(request, dict) else None
    if not isinstance(actions, list) or not all(isinstance(action, dict) for action in actions):
        raise ProtocolError(f"session {session_id}: malformed handshake request")
    processed: list[dict[str, Any]] = []
    errors: list[str] = []
    failure: CommandError | None = None
    cipher: SessionCipher | None = None
    for action in actions:
        action_type = str(action.get("ActionType"))[:64]
        if action_type == "SessionType":
            parameters = action.get("ActionParameters")
            session_type = parameters.get("SessionType") if isinstance(parameters, dict) else None
            if session_type in COMMAND_SESSION_TYPES:
                processed.append(_processed(action_type, ACTION_SUCCESS))
                continue
            reason = f"session type {str(session_type)[:64]!r} does not run a command"
            processed.append(
                _processed(action_type, ACTION_FAILED, f"Failed to process action SessionType: {reason}")
            )
            errors.append(reason)
            failure = failure or ProtocolError(
                f"session {session_id}: {reason} (use a NonInteractiveCommands document)"
            )
        elif action_type == "KMSEncryption":
            try:
                if failure is not None:
                    raise failure  # the session fails anyway: no data key for it
                if data_keys is None:
                    raise EncryptionRequired(
                        f"session {session_id}: Session Manager preferences require KMS encryption "
                        f"and no key is configured: set the stack's {KEY_PARAMETER} parameter to "
                        "the key the preferences name"
                    )
                agreed = data_keys.agree(action.get("ActionParameters"), session_id, target)
            except CommandError as error:
                reason = f"no session data key: {error.reason}"[:300]
                processed.append(
                    _processed(
                        action_type, ACTION_FAILED, f"Failed to process action KMSEncryption: {reason}"
                    )
                )
                errors.append(reason)
                failure = failure or error
                continue
            processed.append(_processed(action_type, ACTION_SUCCESS, result=agreed.action_result))
            cipher = agreed.cipher
        else:
            reason = f"Unsupported action {action_type}"
            processed.append(_processed(action_type, ACTION_UNSUPPORTED, reason))
            errors.append(reason)
            failure = failure or ProtocolError(
                f"session {session_id}: the agent asked for an unsupported client action {action_type!r}"
            )
    response = {
        "ClientVersion": client_version,
        "ProcessedClientActions": processed,
        "Errors": errors or None,
    }
    agent_version = request.get("AgentVersion")
    return HandshakeAnswer(
        response, failure, agent_version if isinstance(agent_version, str) else None, cipher
    )
