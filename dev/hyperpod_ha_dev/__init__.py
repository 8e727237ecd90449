"""hyperpod-ha's development tools: the embedded stack (moto, in process), the simulation, the
``hyperpod-ha`` command and ``configure``. What is deployed is written by ``hyperpod_ha_stack``.

Nothing here ships to Lambda. It may import the runtime package ``hyperpod_ha``, the writers of
the stack ``hyperpod_ha_stack`` and the lab ``hyperpod_lab``; none of them may import it. What it
reads ships with it as package data: the captures of real Slurm output (``captures/``) and,
through ``project/``, the template, the functions and the state machines."""

from __future__ import annotations

from pathlib import Path

CAPTURES = Path(__file__).with_name("captures")
"""Output of real Slurm controllers (22.05 and 24.11), captured in the lab: see its README."""
