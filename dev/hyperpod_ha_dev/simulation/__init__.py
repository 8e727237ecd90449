"""Whole scenarios on the embedded stack, with a simulated cluster answering the real probe, or
(``lab/``) the real Slurm lab's controllers with real faults.

Development tooling (``hyperpod-ha simulate``, ``make demo``, the workflow tests, and
``standin``: the local stand-in of the stack for ``sam local``); kept out of
the Lambda layer. It may import :mod:`hyperpod_ha`, the rest of :mod:`hyperpod_ha_dev` and
:mod:`hyperpod_lab`.
"""
