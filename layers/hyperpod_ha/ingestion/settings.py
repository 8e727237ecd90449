"""The settings parts of the ingestion functions (their own settings classes are in
:mod:`hyperpod_ha.ingestion.function`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from hyperpod_ha.environment import Integer, Settings


@dataclass(frozen=True)
class MassFailurePolicy(Settings):
    # More than this many unhealthy workers ...
    threshold: Annotated[int, Integer("MASS_FAILURE_THRESHOLD", 5, minimum=0)]
    # ... within one window of this length.
    window_seconds: Annotated[int, Integer("MASS_FAILURE_WINDOW_MINUTES", 10, minimum=1, scale=60)]
