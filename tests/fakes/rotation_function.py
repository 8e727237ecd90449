"""RotateDbSecretFunction's own collaborators with its commands faked: the controllers' runner
and, where a test gives one, the discovery of the cluster's controllers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from hyperpod_ha.commands import CommandRunner
from hyperpod_ha.controllers.models import ClusterControllers
from hyperpod_ha.rotation import function as rotation_function
from hyperpod_ha.rotation.collaborators import Collaborators
from hyperpod_ha.rotation.function import RotateDbSecretFunctionSettings

Discover = Callable[[str, str], ClusterControllers]


def fake_commands(
    module: Any, monkeypatch: pytest.MonkeyPatch, runner: CommandRunner, discover: Discover | None = None
) -> None:
    """Patches what RotateDbSecretFunction.from_settings calls; the loaded handler module makes its
    function again on the next invocation."""
    wired = rotation_function.aws_collaborators

    def collaborators(settings: RotateDbSecretFunctionSettings) -> Collaborators:
        real: Collaborators = wired(settings)
        return replace(real, runner=lambda: runner, discover=discover or real.discover)

    monkeypatch.setattr(rotation_function, "aws_collaborators", collaborators)
    module._function.cache_clear()
