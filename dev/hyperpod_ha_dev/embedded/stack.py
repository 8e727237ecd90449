"""The stack of ``template.yaml`` on moto, in process: :func:`create_stack` and what it returns.

Created by :mod:`.builder` (the order, the unknown types) with :mod:`.resource_creators` (one
per resource type); the result is a :class:`~.created_stack.EmbeddedStack`.
"""

from __future__ import annotations

from hyperpod_ha_dev.embedded.builder import create_stack
from hyperpod_ha_dev.embedded.created_stack import ACCOUNT, REGION, EmbeddedStack
from hyperpod_ha_dev.embedded.function_spec import function_spec

__all__ = ["ACCOUNT", "REGION", "EmbeddedStack", "create_stack", "function_spec"]
