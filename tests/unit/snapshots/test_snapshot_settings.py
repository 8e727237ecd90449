"""SnapshotStateFunction's settings: the template's defaults, and the variable named when one is
missing or malformed."""

from __future__ import annotations

import pytest

from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.snapshots.function import SnapshotStateFunctionSettings
from hyperpod_ha.snapshots.settings import SnapshotSettings
from tests.unit.snapshots.cases.snapshot_support import FS, STATE_PATH

ENV = {"CLUSTER_NAME": "a", "FILE_SYSTEM_ID": FS}


def test_settings_from_environment() -> None:
    paths = "/aws/hyperpod/a/var/spool/slurmctld/, aws/hyperpod/a/opt/slurm/etc ,"
    settings = SnapshotSettings.from_environment({**ENV, "EXPORT_PATHS": paths})
    assert settings.retention == 7
    assert settings.paths_for("a") == ("aws/hyperpod/a/var/spool/slurmctld", "aws/hyperpod/a/opt/slurm/etc")
    assert SnapshotSettings(FS).paths_for("ml-cluster") == (STATE_PATH,)
    with pytest.raises(ConfigurationError, match="at least 1"):
        SnapshotSettings.from_environment({**ENV, "BACKUP_RETENTION": "0"})


def test_the_template_defaults_and_empty_values() -> None:
    settings = SnapshotSettings.from_environment(
        {"CLUSTER_NAME": "a", "FILE_SYSTEM_ID": " ", "STACK_NAME": ""}
    )
    assert settings == SnapshotSettings(None, retention=7, cluster_name="a", min_backup_interval_minutes=60)


def test_a_missing_cluster_name_is_named() -> None:
    with pytest.raises(ConfigurationError, match="CLUSTER_NAME is not set"):
        SnapshotSettings.from_environment({"FILE_SYSTEM_ID": FS})


@pytest.mark.parametrize("name", ["BACKUP_RETENTION", "MIN_BACKUP_INTERVAL_MINUTES"])
def test_a_malformed_number_is_named(name: str) -> None:
    with pytest.raises(ConfigurationError, match=f"{name} is not an integer"):
        SnapshotSettings.from_environment({**ENV, name: "seven"})


def test_the_process_environment_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTER_NAME", "from-the-process")
    monkeypatch.setenv("STATE_TABLE", "hyperpod-ha-StateTable")
    settings = SnapshotStateFunctionSettings.from_environment()
    assert (settings.snapshots.cluster_name, settings.state_table) == (
        "from-the-process",
        "hyperpod-ha-StateTable",
    )
