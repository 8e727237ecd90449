"""make test's plan (tests/tiers.py): what runs after what, and what a step's log says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import tiers


def names(plan: list[tiers.Step]) -> list[str]:
    return [step.name for step in plan]


def test_as_root_every_tier_runs_after_what_it_needs() -> None:
    plan = {step.name: step for step in tiers.steps(check_only=False, as_root=True)}

    assert set(plan) == {
        "lint",
        "packages",
        "slurm-24.11",
        "slurm-25.11",
        "non-lab",
        "container",
        "ssm-agent",
        "arm64",
        "lab-24.11",
        "lab-25.11",
    }
    assert plan["lab-24.11"].needs == ("slurm-24.11",)
    assert plan["lab-25.11"].needs == ("slurm-25.11",)
    # The suite outside the lab starts once the machine's packages are in (it must not change under it).
    assert plan["non-lab"].needs == ("packages",)
    assert plan["slurm-24.11"].needs == ("packages",)
    # The labs wait on the clock: nothing CPU-bound runs at their priority.
    assert {name for name, step in plan.items() if step.nice == 0} == {"packages", "lab-24.11", "lab-25.11"}
    # Each lab tier in slots of its own.
    assert plan["lab-24.11"].env["HYPERPOD_LAB_SLOT"] != plan["lab-25.11"].env["HYPERPOD_LAB_SLOT"]
    assert not any(step.skip for step in plan.values())
    # AWS's agent only in its sandbox, and the suite outside the lab leaves its tests to it.
    assert plan["ssm-agent"].argv[0].endswith("tests/ssm_agent/sandbox.sh")
    assert "not ssm_agent" in " ".join(plan["non-lab"].argv)
    # The arm64 tier installs its own packages (qemu-user-static, debootstrap) and runs only when
    # asked (`make test-arm64`): make test neither installs nor runs it.
    assert plan["arm64"].on_request
    assert "arm64_root.sh --packages" in " ".join(plan["arm64"].argv)
    assert "arm64" not in " ".join(plan["packages"].argv)


def test_make_test_runs_every_tier_but_those_run_on_request() -> None:
    plan = tiers.steps(check_only=False, as_root=True)

    assert "arm64" not in names(tiers.selected(plan, None))
    assert names(tiers.selected(plan, ["arm64"])) == ["arm64"]
    assert set(names(tiers.selected(plan, None))) == set(names(plan)) - {"arm64"}


def test_as_another_user_the_root_tiers_are_named_with_their_command() -> None:
    plan = tiers.steps(check_only=False, as_root=False)

    skipped = {step.name: step.skip for step in plan if step.skip}
    assert set(skipped) == {"container", "ssm-agent", "arm64", "lab-24.11", "lab-25.11"}
    assert all("sudo make test-" in reason for reason in skipped.values())
    assert [step.name for step in plan if not step.skip] == ["lint", "non-lab"]


def test_the_quick_loop_has_no_workflow_lab_or_container_tier() -> None:
    (lint, suite) = tiers.steps(check_only=True, as_root=True)

    assert lint.name == "lint"
    assert "tests/unit" in suite.argv
    assert "tests/functions" in suite.argv
    assert not any(part in arg for arg in suite.argv for part in ("workflow", "lab", "container"))


def test_only_a_step_brings_what_it_needs() -> None:
    plan = tiers.steps(check_only=False, as_root=True)

    assert names(tiers.needed(plan, ["lab-25.11"])) == ["packages", "slurm-24.11", "slurm-25.11", "lab-25.11"]
    assert names(tiers.needed(plan, ["lint"])) == ["lint"]
    with pytest.raises(SystemExit, match=r"no step lab-26\.05"):
        tiers.needed(plan, ["lab-26.05"])


@pytest.mark.parametrize(
    ("log", "counts"),
    [
        (
            "....\n1 failed, 3039 passed, 45 warnings in 3052.74s (0:50:52)\n",
            "1 failed, 3039 passed, 45 warnings",
        ),
        ("==== 75 passed, 2 deselected in 742.53s (0:12:22) ====\n", "75 passed, 2 deselected"),
        ("ERROR: usage: pytest\n", ""),
    ],
)
def test_a_steps_tests_are_read_from_pytests_last_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log: str, counts: str
) -> None:
    monkeypatch.setattr(tiers, "LOGS", tmp_path)
    step = tiers.Step("non-lab", ["pytest"])
    step.log.write_text(f"{log}TOTAL    10056    300    97%\n")

    assert step.counts() == counts
    assert step.coverage() == 97.0
