"""The restore's errors: what the state machine matches (``ErrorEquals``) by class name."""

from __future__ import annotations

from hyperpod_ha.errors import HyperpodHaError, InputRejected


class InvalidRestoreRequest(InputRejected):
    """A restore step's input is not what the state machine sends; the reason is safe to log."""


class RestoreStepRefused(InvalidRestoreRequest):
    """A step that acts (start, reboot) refused at the moment it would act: the request is not
    this restore's (another cluster, no lease), its node is not a controller discovered now, or
    a guard or the hourly bound says no; or a step that takes the lease, plans, records or
    starts the verification (begin, plan, finish, verify) was not invoked by a running
    execution of this stack's restore state machine. Nothing was acted on, written or sent; the
    reason is safe to log."""


class RestoreCommandFailed(HyperpodHaError):
    """The restore document could not run on a controller, or its script said it failed."""
