"""The errors of Slurm output parsing: bad input from outside, safe to log."""

from __future__ import annotations

from hyperpod_ha.errors import InputRejected


class SlurmOutputError(InputRejected):
    """Text is not what the parser expects (a ``ValueError`` too). The reason is safe to log."""


class ProbeOutputError(SlurmOutputError):
    """The text is not (or not enough of) the controller probe's output."""
