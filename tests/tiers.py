"""`make test` and `make check`: every tier, each started as soon as what it needs is there.

Most of `make test`'s time on two cores is waiting: for Slurm's builds, for the lab's
failovers (SlurmctldTimeout, settles, restarts), for moto's interpreter. So the tiers run side
by side: lint, the suite outside the lab and the container tier while Slurm builds, and each
Slurm release's lab tier (several labs at once, one per test worker, ``HYPERPOD_LAB_SLOT``) as
soon as its build is there. The lab tiers keep the normal priority: their daemons and checks
are the ones that wait on the clock; the builds and the CPU-bound tiers yield to them.

Each step's output goes to ``.test-logs/<step>.log`` (its tail is printed when it fails); the
end prints a table of each step's wall time and tests, and writes it to
``.test-logs/timings.json`` (``make test-timing`` keeps a copy). Exit 1 when any step failed.
As another user than root, the steps that need root are named and skipped, as before.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / ".test-logs"
BIN = Path(sys.executable).parent
PYTEST = [str(BIN / "python"), "-m", "pytest", "-p", "no:cacheprovider"]
# Lab tests from Slurm 25.11 (HyperPod's newer AMIs), a smaller set: the drill (4 min on 25.11)
# and the rest run on 24.11 only. 22.05 is on no HyperPod AMI and in no tier (docs/lab.md).
LAB_2511_TESTS = (
    "test_up_builds or test_a_job_runs or test_runner_runs or test_sigkill or verdict[failover] or "
    "verdict[back] or verdict[hung-primary] or verdict[isolated-primary] or verdict[standby-refuses] or "
    "verdict[both-down] or test_an_operator_session"
)
# Labs at once: each waits on the clock most of the time, and each costs two cores' worth only
# while its scenario's workflow runs. 24.11 takes slots 1-3, 25.11 slot 4; slot 0 is the
# operator's (`hyperpod-ha lab up`), left alone.
LAB_WORKERS = 3
# pytest's last line: "3037 passed, 2 skipped in 687.86s (0:11:27)", in "=" rules without -q.
_SUMMARY = re.compile(
    r"^(?:=+ )?(?P<counts>[0-9]+ (?:passed|failed|errors?|skipped|deselected)\b[^=\n]*?) in [0-9.]+s",
    re.MULTILINE,
)
SSM_AGENT_SANDBOX = [str(ROOT / "tests" / "ssm_agent" / "sandbox.sh")]
_COVERAGE_TOTAL = re.compile(r"^TOTAL\s+\d+\s+\d+\s+(?P<percent>[0-9.]+)%", re.MULTILINE)


@dataclass
class Step:
    name: str
    argv: Sequence[str]
    needs: tuple[str, ...] = ()
    # Niceness: the CPU-bound steps (one level, so none starves another's tests that run a
    # probe against the clock) yield to the lab's, whose daemons and checks wait on the clock.
    nice: int = 0
    env: Mapping[str, str] = field(default_factory=dict)
    # A root-only step run as another user: skipped, with the command that runs it.
    skip: str | None = None
    # Run only when named (``--only``): a tier too slow for `make test`'s budget, its own target.
    on_request: bool = False
    started: float | None = None
    seconds: float | None = None
    returncode: int | None = None

    @property
    def log(self) -> Path:
        return LOGS / f"{self.name}.log"

    def counts(self) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        found = _SUMMARY.findall(text)
        return found[-1].strip() if found else ""

    def coverage(self) -> float | None:
        try:
            found = _COVERAGE_TOTAL.search(self.log.read_text(errors="replace"))
        except OSError:
            return None
        return float(found["percent"]) if found else None


def steps(*, check_only: bool, as_root: bool) -> list[Step]:
    python = str(BIN / "python")
    # Lint runs no test and waits on no clock: it yields even to the CPU-bound test steps.
    lint = Step("lint", ["make", "--no-print-directory", "lint"], nice=10)
    if check_only:
        # The quick loop: lint, and the unit and in-process function tiers on both cores (a
        # test that starts the command as a new Python, 1-20 s each, waits for `make test`).
        in_process = [*PYTEST, "-n", "2", "-q", "-m", "not cli_process", "tests/unit", "tests/functions"]
        return [lint, Step("unit-functions", in_process)]
    non_lab = Step(
        "non-lab",
        [
            str(ROOT / "tests" / "fresh_host.sh"),
            *PYTEST,
            # Two workers: the suite is CPU-bound (more only add load, and its probes run against
            # the clock); work stealing keeps both busy to the end.
            "-n",
            "2",
            "--dist",
            "worksteal",
            "-q",
            "-m",
            "not lab and not container and not ssm_agent and not arm64",
            "--cov=layers/hyperpod_ha",
            "--cov-report=term:skip-covered",
        ],
        nice=5,
    )
    if not as_root:
        return [
            lint,
            non_lab,
            Step("container", [], skip="the container tier needs a Docker daemon: sudo make test-container"),
            Step("ssm-agent", [], skip="AWS's Session Manager agent runs as root: sudo make test-ssm-agent"),
            Step("arm64", [], skip="the arm64 root is made with debootstrap as root: sudo make test-arm64"),
            Step("lab-24.11", [], skip="the Slurm lab needs root: sudo make test-lab"),
            Step("lab-25.11", [], skip="the Slurm lab needs root: sudo make test-lab"),
        ]
    lab = [*PYTEST, "-n", str(LAB_WORKERS), "--dist", "loadscope", "-q"]
    return [
        lint,
        # Every package first, one apt-get after the other: the suite outside the lab then starts
        # on a machine that changes no more under it (tests/fresh_host.sh hides what is there).
        # 25.11's packages are 24.11's and the HTTP parser its slurmctld's /readyz needs.
        Step(
            "packages",
            [
                "sh",
                "-c",
                f"{ROOT / '.ci' / 'container-runtime'} install && "
                f"{python} -m hyperpod_lab prepare --slurm 25.11 --packages-only",
            ],
        ),
        Step(
            "slurm-24.11",
            [python, "-m", "hyperpod_lab", "prepare", "--slurm", "24.11"],
            needs=("packages",),
            nice=5,
        ),
        Step(
            "slurm-25.11",
            [python, "-m", "hyperpod_lab", "prepare", "--slurm", "25.11"],
            needs=("slurm-24.11",),
            nice=5,
        ),
        dataclasses.replace(non_lab, needs=("packages",)),
        Step("container", [*PYTEST, "-q", "-m", "container"], needs=("packages",), nice=5),
        # AWS's agent against the project's client, in namespaces of its own (loopback only).
        Step("ssm-agent", [*SSM_AGENT_SANDBOX, *PYTEST, "-q", "-m", "ssm_agent", "tests/ssm_agent"], nice=5),
        # The layer built for arm64, imported and tested by an arm64 Python under qemu-user:
        # `make test-arm64`, not in `make test` (emulated, it took 17 min of CI's 22 and slowed
        # every tier beside it; docs/development.md).
        Step(
            "arm64",
            [
                "sh",
                "-c",
                f"{ROOT / 'tests' / 'arm64' / 'arm64_root.sh'} --packages && "
                + " ".join([*PYTEST, "-q", "-m", "arm64", "tests/arm64"]),
            ],
            nice=5,
            on_request=True,
        ),
        Step(
            "lab-24.11",
            [*lab, "-m", "lab and not lab_long"],
            needs=("slurm-24.11",),
            env={"HYPERPOD_LAB_SLOT": "1", "HYPERPOD_LAB_SLURM": "24.11"},
        ),
        Step(
            "lab-25.11",
            [*PYTEST, "-q", "-m", "lab", "-k", LAB_2511_TESTS],
            needs=("slurm-25.11",),
            env={"HYPERPOD_LAB_SLOT": str(LAB_WORKERS + 1), "HYPERPOD_LAB_SLURM": "25.11"},
        ),
    ]


def selected(plan: list[Step], only: Sequence[str] | None) -> list[Step]:
    """The steps ``--only`` names and what they need; without it, every step not run on request."""
    return needed(plan, only) if only else [step for step in plan if not step.on_request]


def needed(plan: list[Step], names: Sequence[str]) -> list[Step]:
    """The steps named and, transitively, those they need, in the plan's order."""
    by_name = {step.name: step for step in plan}
    unknown = sorted(set(names) - set(by_name))
    if unknown:
        raise SystemExit(f"no step {', '.join(unknown)}; the steps: {', '.join(by_name)}")
    wanted: set[str] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name not in wanted:
            wanted.add(name)
            pending += by_name[name].needs
    return [step for step in plan if step.name in wanted]


class Runner:
    def __init__(self, plan: list[Step]) -> None:
        self.plan = plan
        self.by_name = {step.name: step for step in plan}
        self.lock = threading.Lock()
        self.done = threading.Condition(self.lock)
        self.began = time.monotonic()

    def run(self) -> int:
        LOGS.mkdir(exist_ok=True)
        threads = [threading.Thread(target=self._run_step, args=(step,), daemon=True) for step in self.plan]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return 0 if all(step.returncode in (0, None) for step in self.plan if not step.skip) else 1

    def _wait_for(self, step: Step) -> str | None:
        """Block until every step ``step`` needs has ended; the one that failed, if any."""
        with self.done:
            while True:
                needed = [self.by_name[name] for name in step.needs]
                failed = next((n.name for n in needed if n.returncode not in (None, 0)), None)
                if failed is not None:
                    return failed
                if all(n.returncode == 0 or n.skip for n in needed):
                    return None
                self.done.wait()

    def _run_step(self, step: Step) -> None:
        if step.skip:
            self._say(f"{step.name}: skipped: {step.skip}")
            return
        failed = self._wait_for(step)
        if failed is not None:
            self._finish(step, 1, f"not run: {failed} failed")
            return
        step.started = time.monotonic()
        self._say(f"{step.name}: started")
        with step.log.open("w") as sink:
            sink.write(f"$ {' '.join(step.argv)}\n")
            sink.flush()
            process = subprocess.run(
                ["nice", "-n", str(step.nice), *step.argv] if step.nice else list(step.argv),
                cwd=ROOT,
                env={**os.environ, **step.env},
                stdout=sink,
                stderr=subprocess.STDOUT,
                check=False,
            )
        step.seconds = time.monotonic() - step.started
        self._finish(step, process.returncode, step.counts())

    def _finish(self, step: Step, returncode: int, detail: str) -> None:
        with self.done:
            step.returncode = returncode
            self.done.notify_all()
        verdict = "ok" if returncode == 0 else f"FAILED (exit {returncode})"
        took = f" in {step.seconds:.0f} s" if step.seconds is not None else ""
        self._say(f"{step.name}: {verdict}{took}{f': {detail}' if detail else ''}")
        if returncode != 0 and step.log.exists():
            tail = step.log.read_text(errors="replace").splitlines()[-40:]
            self._say("\n".join(f"  | {line}" for line in tail))

    def _say(self, text: str) -> None:
        with self.lock:
            print(f"[{time.monotonic() - self.began:6.0f} s] {text}", flush=True)

    def report(self) -> dict[str, object]:
        rows = []
        for step in self.plan:
            rows.append(
                {
                    "step": step.name,
                    "started_at_seconds": None
                    if step.started is None
                    else round(step.started - self.began, 1),
                    "wall_seconds": None if step.seconds is None else round(step.seconds, 1),
                    "result": "skipped" if step.skip else ("passed" if step.returncode == 0 else "failed"),
                    "tests": step.counts(),
                    **({"coverage_percent": cov} if (cov := step.coverage()) is not None else {}),
                }
            )
        return {"total_wall_seconds": round(time.monotonic() - self.began, 1), "steps": rows}


def print_table(report: Mapping[str, object]) -> None:
    print(f"\n{'step':<18} {'start':>6} {'wall':>6}  result   tests")
    rows = report["steps"]
    assert isinstance(rows, list)
    for row in rows:
        start = "" if row["started_at_seconds"] is None else f"{row['started_at_seconds']:.0f}"
        wall = "" if row["wall_seconds"] is None else f"{row['wall_seconds']:.0f}"
        coverage = f" (coverage {row['coverage_percent']}%)" if "coverage_percent" in row else ""
        print(f"{row['step']:<18} {start:>6} {wall:>6}  {row['result']:<8} {row['tests']}{coverage}")
    print(f"total: {report['total_wall_seconds']:.0f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.tiers", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="the quick loop: lint, unit and function tiers")
    parser.add_argument(
        "--only", nargs="+", metavar="STEP", help="these steps and what they need (e.g. lab-24.11 container)"
    )
    parser.add_argument("--record", type=Path, help="also write the timings to this file")
    args = parser.parse_args(argv)
    plan = steps(check_only=args.check, as_root=os.geteuid() == 0)
    plan = selected(plan, args.only)
    runner = Runner(plan)
    code = runner.run()
    report = runner.report()
    print_table(report)
    text = json.dumps(report, indent=2) + "\n"
    (LOGS / "timings.json").write_text(text)
    if args.record is not None:
        args.record.write_text(text)
    return code


if __name__ == "__main__":
    sys.exit(main())
