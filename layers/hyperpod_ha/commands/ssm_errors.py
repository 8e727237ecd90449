"""Turn SSM API failures into the command runner's typed errors.

Reasons carry the operation, the target, the AWS error code and a trimmed AWS message
(which names ARNs, never credentials or session tokens), so they are safe to log.
"""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError

from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.commands import AccessDenied, CommandError, TargetUnreachable, Throttled

_MAX_MESSAGE = 300

UNREACHABLE_CODES = frozenset(
    {
        "TargetNotConnected",  # StartSession: the agent is offline or not registered
        "InvalidInstanceId",  # SendCommand: not managed, stopped, or agent offline
        "InvalidTarget",
    }
)
DENIED_CODES = frozenset({"AccessDeniedException", "AccessDenied", "UnauthorizedOperation"})
THROTTLED_CODES = frozenset(
    {
        "ThrottlingException",
        "Throttling",
        "ThrottledException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
    }
)


# The typed error each group of codes stands for; any other code is a plain CommandError.
_KINDS: tuple[tuple[frozenset[str], type[CommandError]], ...] = (
    (UNREACHABLE_CODES, TargetUnreachable),
    (DENIED_CODES, AccessDenied),
    (THROTTLED_CODES, Throttled),
)


def command_error(error: ClientError | BotoCoreError, operation: str, target: str) -> CommandError:
    """The typed error for a failed SSM call (to be raised ``from`` the original)."""
    if isinstance(error, BotoCoreError):
        # Connection and credential problems: the class name says enough and holds no secret.
        return CommandError(f"{operation} for {target} could not reach the SSM API ({type(error).__name__})")
    code = error_code(error)
    message = str(error.response.get("Error", {}).get("Message", ""))[:_MAX_MESSAGE]
    reason = f"{operation} for {target} failed: {code}: {message}".rstrip(": ")
    kind = next((kind for codes, kind in _KINDS if code in codes), CommandError)
    return kind(reason)
