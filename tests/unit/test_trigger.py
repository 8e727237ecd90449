"""The one trigger of a run: its key (the lease's id comes from it), its time, how a message
says it, and every field from a run's input bounded."""

from __future__ import annotations

from hyperpod_ha.lease import lease_id_for_trigger
from hyperpod_ha.request_fields import MAX_ID_CHARS
from hyperpod_ha.trigger import SOURCE_CHARS, Trigger

NOW = 1_796_119_200.0  # 2026-12-01 10:00 UTC


def test_a_trigger_reads_as_its_source_id_and_time() -> None:
    trigger = Trigger("sns", "m-1", time="2026-11-29T14:00:00.000Z")
    assert trigger.key == "sns:m-1"
    assert trigger.at == 1_795_960_800.0
    assert trigger.describe(NOW) == (
        "the controller status notification (SNS message m-1), 1 d 20 h ago (2026-11-29 14:00 UTC)"
    )


def test_without_its_own_time_it_reads_as_the_runs_start_or_without_a_time() -> None:
    trigger = Trigger("operator", "")
    assert trigger.at is None
    assert (
        trigger.describe(NOW, NOW - 60) == "an operator's request (no id), 1 min ago (2026-12-01 09:59 UTC)"
    )
    assert trigger.describe(NOW) == "an operator's request (no id)"


def test_an_unknown_source_is_told_as_it_is_braces_and_all() -> None:
    trigger = Trigger.from_json({"source": "{0}{x}", "id": "{y}", "time": ""})
    assert trigger is not None
    assert trigger.describe(NOW) == "{0}{x} ({y})"


def test_a_run_inputs_trigger_is_bounded_and_its_time_normalised() -> None:
    trigger = Trigger.from_json(
        {"source": "x" * 500, "id": "i" * 5000, "time": "t" * 5000, "summary": {"a": 1}}
    )
    assert trigger is not None
    assert len(trigger.source) <= SOURCE_CHARS
    assert len(trigger.id) <= MAX_ID_CHARS
    assert (trigger.time, trigger.summary) == ("", {})
    moved = Trigger.from_json({"source": "watchdog", "id": "t-1", "time": "2026-12-01T11:00:00+01:00"})
    assert moved == Trigger("watchdog", "t-1", time="2026-12-01T10:00:00.000Z")
    assert Trigger.from_json("not a trigger") is None
    assert Trigger.from_json(moved.to_json()) == moved


def test_every_delivery_of_one_trigger_takes_the_same_lease() -> None:
    first = Trigger("sns", "m-1", {"message": "ON"}, "2026-12-01T10:00:00.000Z")
    again = Trigger("sns", "m-1", {"message": "ON, redelivered"})
    assert lease_id_for_trigger(first) == lease_id_for_trigger(again)
    assert lease_id_for_trigger(first) != lease_id_for_trigger(Trigger("sns", "m-2"))


def test_a_slurm_trigger_reads_as_its_event_kept_only_when_it_is_one_of_ours() -> None:
    trigger = Trigger("slurm-trigger", "m-1", {"event": "backup_slurmctld_failure"}, "2026-12-01T09:59:00Z")
    assert trigger.describe(NOW) == (
        "Slurm's trigger backup_slurmctld_failure (SNS message m-1), 1 min ago (2026-12-01 09:59 UTC)"
    )
    kept = Trigger.from_json({**trigger.to_json(), "summary": {"event": "backup_slurmctld_failure", "x": 1}})
    assert kept is not None
    assert kept.summary == {"event": "backup_slurmctld_failure"}
    for event in ("{0}{x}", "fini", "b" * 5000, 7, None):
        odd = Trigger.from_json({"source": "slurm-trigger", "id": "m-2", "summary": {"event": event}})
        assert odd is not None
        assert odd.summary == {}
        assert odd.describe(NOW) == "Slurm's trigger (event not named) (SNS message m-2)"
    # Only a Slurm trigger's summary keeps it.
    other = Trigger.from_json(
        {"source": "sns", "id": "m-3", "summary": {"event": "backup_slurmctld_failure"}}
    )
    assert other is not None
    assert other.summary == {}
