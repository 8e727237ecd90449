"""Why a lab scenario could not run."""

from __future__ import annotations

from hyperpod_ha.errors import HyperpodHaError, InputRejected


class LabScenarioUnknown(InputRejected):
    """No lab scenario has this name. The reason is safe to log."""


class LabScenarioError(HyperpodHaError, RuntimeError):
    """The lab could not be brought to the state a scenario needs. ``reason`` is safe to log."""
