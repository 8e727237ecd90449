"""Whole scenarios on the embedded stack, with a simulated cluster answering the real probe.

Development tooling (``hyperpod-ha simulate``, ``make demo``, the workflow tests); kept out of
the Lambda layer.
"""
