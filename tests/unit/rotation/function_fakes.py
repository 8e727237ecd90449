"""RotateDbSecretFunction's own wiring with its commands faked: the controllers' runner and,
where a test gives one, the discovery of the cluster's controllers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from hyperpod_ha.commands import CommandRunner
from hyperpod_ha.controllers.models import ClusterControllers
from hyperpod_ha.rotation.function_settings import RotateDbSecretSettings
from hyperpod_ha.rotation.wiring import Collaborators

Discover = Callable[[str, str], ClusterControllers]


def fake_commands(
    module: Any, monkeypatch: pytest.MonkeyPatch, runner: CommandRunner, discover: Discover | None = None
) -> None:
    """Patches the loaded handler module; its service is made again on the next invocation."""
    wired = module.aws_collaborators

    def collaborators(settings: RotateDbSecretSettings) -> Collaborators:
        real: Collaborators = wired(settings)
        return replace(real, runner=lambda: runner, discover=discover or real.discover)

    monkeypatch.setattr(module, "aws_collaborators", collaborators)
    module._service.cache_clear()
