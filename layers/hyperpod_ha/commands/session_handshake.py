"""The client's answer to the agent's HandshakeRequest (payload type 5).

Every requested action gets an answer, as the plugin gives one (``streaming.go``,
``handleHandshakeRequest``): the agent ends a session whose answer holds a status other
than 1 and says why, whereas a client that does not answer leaves it waiting. Only the
session type of a command document is accepted; KMS encryption is answered "failed"
(this client has no KMS data key) and any other action "unsupported". The failure to
raise once the answer is delivered travels with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from hyperpod_ha.commands import CommandError, EncryptionRequired, ProtocolError
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


def _processed(action_type: str, status: int, error: str = "") -> dict[str, Any]:
    return {"ActionType": action_type, "ActionStatus": status, "ActionResult": None, "Error": error}


def answer_handshake(payload: bytes, session_id: str, client_version: str) -> HandshakeAnswer:
    """Build the HandshakeResponse for ``payload``; :class:`ProtocolError` if it is not a request."""
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
            # Accepting needs kms:GenerateDataKey and AES-GCM framing, which this client lacks;
            # the agent then ends the session, and we say why.
            reason = "this client does not support Session Manager encryption"
            processed.append(
                _processed(action_type, ACTION_FAILED, f"Failed to process action KMSEncryption: {reason}")
            )
            errors.append(reason)
            failure = failure or EncryptionRequired(
                f"session {session_id}: Session Manager preferences require KMS encryption, "
                "which this client does not support"
            )
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
    return HandshakeAnswer(response, failure, agent_version if isinstance(agent_version, str) else None)
