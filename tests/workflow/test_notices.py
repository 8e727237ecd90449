"""What people are told, from the real state machine on moto's interpreter: the incident's
message in the one form with its trigger, controllers and next steps; one message however many
watchdog ticks find the cluster still down, one reminder once ReminderMinutes have passed, and
the recovery told with the severity of what it resolves."""

from __future__ import annotations

import datetime as dt

import pytest

from hyperpod_ha.topic_messages import TopicMessage, check_form
from hyperpod_ha_dev.simulation.engine import EmbeddedRun, simulated_run
from hyperpod_ha_dev.simulation.scenarios import SCENARIOS
from tests.conftest import ROOT, published
from tests.functions.test_watchdog import RECOVERING, wait_until_ended

pytestmark = pytest.mark.slow


def told(run: EmbeddedRun) -> list[TopicMessage]:
    """What people were told of the incidents: the simulated controllers' release (22.05.8) is one
    a Slurm advisory names, told apart by its own once-per-release notice (:func:`advisories`)."""
    return [m for m in everything_told(run) if m.attributes["kind"] != "slurm-advisory"]


def everything_told(run: EmbeddedRun) -> list[TopicMessage]:
    return published(run.stack.outputs["NotificationTopicArn"])


def advisories(run: EmbeddedRun) -> list[TopicMessage]:
    return [m for m in everything_told(run) if m.attributes["kind"] == "slurm-advisory"]


def opened_hours_ago(hours: float) -> None:
    """The open OpsItem as if opened ``hours`` ago (the embedded OpsCenter keeps it in moto's SSM
    backend): the reminder's interval has passed without waiting for it."""
    from moto.ssm.models import ssm_backends

    from hyperpod_ha_dev.embedded.opscenter import ops_items
    from hyperpod_ha_dev.embedded.stack import ACCOUNT, REGION

    (item,) = [item for item in ops_items(ssm_backends[ACCOUNT][REGION]).values() if item["Status"] == "Open"]
    item["CreatedTime"] = dt.datetime.now(dt.UTC).timestamp() - hours * 3600


def test_ticks_on_a_cluster_that_stays_down_tell_once_then_remind_once_per_interval() -> None:
    with simulated_run(SCENARIOS["silent-failure"], ROOT) as run:
        for ticks in range(1, 4):
            assert run.stack.tick()["outcome"] == "started"
            wait_until_ended(run, ticks)
        # Three ticks, three runs, one OpsItem: one message (it was one per tick).
        (opened,) = told(run)
        check_form(opened)
        assert opened.attributes == {
            "cluster": "ml-cluster",
            "kind": "DOWN",
            "severity": "1",
            "event": "opened",
            "dedup_key": "hyperpod-ha:ml-cluster:DOWN",
            "level": "critical",
            "verdict": "DOWN",
        }
        assert opened.subject == "[hyperpod-ha] ml-cluster: DOWN: no Slurm controller is active (sev 1)"
        body = opened.body
        assert "Triggered by: the watchdog's scheduled check (" in body
        assert " ago (20" in body  # the trigger's time as an age and a UTC minute
        for name in ("ctl1", "ctl2"):
            (line,) = [line for line in body.splitlines() if line.startswith(f"  {name}  i-")]
            assert " 10.214.0." in line  # its address
            assert (
                f"     {name}: aws ssm start-session --region us-east-1 --target sagemaker-cluster:" in body
            )
        # Complete (issue 40): the embedded stack's own name, as AWS::StackName gives it.
        runbook = "hyperpod-ha runbook start --cluster ml-cluster --stack-name hyperpod-ha --region us-east-1"
        assert f"{runbook} --follow" in body
        assert "/systems-manager/opsitems/oi-" in body

        opened_hours_ago(1.1)
        for ticks in range(4, 6):
            assert run.stack.tick()["outcome"] == "started"
            wait_until_ended(run, ticks)
        # Five runs on the same release: the advisory told once, a notice of severity 4.
        (advisory,) = advisories(run)
        assert (advisory.attributes["severity"], advisory.attributes["event"]) == ("4", "notice")
        reminders = [m for m in told(run) if m.attributes["event"] == "reminder"]
        (reminder,) = reminders  # the fourth tick reminds; the fifth, within the hour, does not
        check_form(reminder)
        assert reminder.subject.startswith("[hyperpod-ha] ml-cluster: still open for 1 h ")
        assert reminder.subject.endswith(": DOWN: no Slurm controller is active (sev 1)")
        run.stack.stop_running_executions()


def test_the_recovery_is_told_with_the_severity_of_what_it_resolves() -> None:
    with simulated_run(RECOVERING, ROOT) as run:
        assert run.stack.tick()["outcome"] == "started"
        wait_until_ended(run, 1)
        assert run.stack.tick()["outcome"] == "started"
        wait_until_ended(run, 2)
        opened, recovered = told(run)
        check_form(recovered)
        assert recovered.attributes == {
            "cluster": "ml-cluster",
            "kind": "recovered",
            "severity": opened.attributes["severity"],
            "event": "resolved",
            # The resolve carries the opening's key: a paging service resolves what it triggered.
            "dedup_key": opened.attributes["dedup_key"],
            "level": opened.attributes["level"],
            "verdict": "HEALTHY",
        }
        assert "DOWN resolved" in recovered.subject
        assert "ctl1 (configured primary) is active" in recovered.body
