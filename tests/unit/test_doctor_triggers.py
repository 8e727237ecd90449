"""``hyperpod-ha doctor``'s look at the Slurm triggers: never a failure, a warning when nobody
installs them or the last verdict found them missing."""

from __future__ import annotations

from hyperpod_ha.verdict.slurm_triggers import missing_text
from hyperpod_ha_cli.doctor import PASS, WARN, slurm_triggers_check

TOPIC = "arn:aws:sns:us-east-1:123456789012:failover"


def check(setting: str = "on", watchdog: bool = True, reasons: tuple[str, ...] = ()) -> tuple[str, str, str]:
    found = slurm_triggers_check(setting, watchdog, list(reasons), "hp-SlurmTriggersDocument", TOPIC)
    assert found.name == "slurm triggers"
    return found.outcome, found.detail, found.fix


def test_on_with_the_watchdog_and_nothing_missing_passes() -> None:
    assert check()[:2] == (PASS, "on: the watchdog installs them and re-checks them at each tick")
    assert check("off")[:2] == (PASS, "off (SlurmTriggers): none installed, none looked for")


def test_on_without_the_watchdog_warns_with_the_install_command() -> None:
    outcome, detail, fix = check(watchdog=False)
    assert (outcome, detail) == (
        WARN,
        "on, but the watchdog is off (WatchdogRateMinutes 0): nobody installs them",
    )
    assert fix.endswith(
        f"--document-name hp-SlurmTriggersDocument --parameters mode=install,topicArn={TOPIC}"
    )


def test_the_last_verdicts_missing_triggers_are_told() -> None:
    reason = missing_text(2, ("backup_slurmctld_failure", "primary_slurmctld_failure"))
    outcome, detail, fix = check(reasons=("ctl1 is active: ...", reason))
    assert (outcome, detail) == (WARN, f"the last verdict: {reason}")
    assert fix.startswith("the watchdog's next tick installs them, or: aws ssm start-session ")
    program = "the Slurm trigger program /usr/local/libexec/hyperpod-ha/slurm-trigger is missing on ctl2: ..."
    assert check(reasons=(program,))[0] == WARN
