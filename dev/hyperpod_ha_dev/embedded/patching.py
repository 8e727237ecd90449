"""Patches of moto that exist only while the embedded stack is in use."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any
from unittest import mock

# (class or module, attribute, replacement)
Patch = tuple[object, str, Any]


@contextlib.contextmanager
def applied(patches: Sequence[Patch]) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for owner, attribute, replacement in patches:
            stack.enter_context(mock.patch.object(owner, attribute, replacement, create=True))
        yield
