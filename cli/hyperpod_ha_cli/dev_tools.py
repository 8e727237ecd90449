"""The development commands (``simulate``, ``invoke``, ``lab``, ``local``, and ``status
--embedded``/``--lab``, ``drill start --lab``) live in ``hyperpod_ha_dev``, which needs the
``dev`` extra (moto, SAM's translator). Found by name when they run, so that the on-call
commands install and run without them; without them, one line says what to install."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from hyperpod_ha_cli.errors import UsageError

INSTALL_HINT = "pip install 'hyperpod-ha[dev]' (in a checkout: make venv)"
# What the development tools import that the on-call command does not declare.
_NEEDED = ("moto", "samtranslator", "hyperpod_ha_dev")


def available() -> bool:
    try:
        return all(importlib.util.find_spec(name) is not None for name in _NEEDED)
    except (ImportError, ValueError):  # a finder that refuses the name: not installed either
        return False


def load(module: str, what: str) -> ModuleType:
    """``hyperpod_ha_dev.<module>``; a usage error naming the extra when it is not installed."""
    if not available():
        raise UsageError(f"{what} is a development command: {INSTALL_HINT}")
    return importlib.import_module(f"hyperpod_ha_dev.{module}")
