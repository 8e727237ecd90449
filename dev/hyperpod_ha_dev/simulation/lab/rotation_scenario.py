"""The lab's database secret rotation scenario: a real rotation, rolled out to every controller.

Secrets Manager (moto) rotates the lab's database secret with the alternating-users strategy;
the roll-out rewrites every controller's slurmdbd.conf through the stack's own Session
document and restarts its slurmdbd, one controller at a time, while every controller's
accounting is polled: it must never be down on all of them at once, and jobs run before and
after must be accounted.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any, Final

import boto3

from hyperpod_ha.redaction import scrub_text
from hyperpod_ha.rotation.secret import AWSCURRENT, AWSPREVIOUS, alternate_username
from hyperpod_ha_dev.simulation.lab.errors import LabScenarioError
from hyperpod_ha_dev.simulation.lab.polling import poll
from hyperpod_ha_dev.simulation.lab.probes import controller_names, dbd_answers
from hyperpod_ha_dev.simulation.lab.progress import Drill
from hyperpod_ha_dev.simulation.lab.scenario import LabScenario
from hyperpod_ha_dev.simulation.lab.transport import LAB_TRANSPORT
from hyperpod_lab import Lab

ACCOUNTED_SECONDS: Final = 30.0
# Where the lab's controllers keep slurmdbd.conf (HyperPod: /opt/slurm/etc/slurmdbd.conf).
LAB_SLURMDBD_CONF: Final = "/etc/slurm/slurmdbd.conf"
ROLLOUT_VERIFY_SECONDS: Final = 30
# A restart of slurmdbd as the accounting poller sees it: the stop (SIGTERM, exit), the start
# and the seconds until it answered, which the node script reports; this bounds the first
# two and the poll's resolution.
RESTART_STOP_ALLOWANCE_SECONDS: Final = 5.0
POLL_INTERVAL_SECONDS: Final = 0.1
# The roll-out restarts one controller's slurmdbd at a time, so no moment should find them all
# failing; this much overlap is the polls' resolution (each controller polled every 0.1 s plus
# the time one sacctmgr takes).
BLACKOUT_TOLERANCE_SECONDS: Final = 1.0
ROTATION_STEPS: Final = ("createSecret", "setSecret", "testSecret", "finishSecret")


def _stored_credentials(lab: Lab) -> tuple[str, str]:
    """StorageUser and StoragePass of every controller's slurmdbd.conf (they must agree)."""
    found: list[tuple[str, str]] = []
    for name in controller_names(lab):
        stored_user, stored_password, _, _ = _conf_facts(lab, name)
        found.append((stored_user, stored_password))
    user, password = found[0]
    if (
        not user
        or not password
        or any(
            other != user or not secrets.compare_digest(other_password, password)
            for other, other_password in found[1:]
        )
    ):
        raise LabScenarioError("the controllers' slurmdbd.conf do not hold the same credentials")
    return user, password


def prepare_accounting_user(lab: Lab, user: str) -> None:
    """Give the lab's database user the shape of the HyperPod sample stack's RDS user.

    There the user logs in from anywhere (``'%'``) and may create users and pass on its
    grants, which the alternating rotation needs (the twin gets exactly its grants). The lab
    creates it ``@'localhost'`` with the database only; the rotation function reaches MariaDB
    over TCP, where that account does not match (this server skips name resolution).
    """
    connection = lab.admin.connect()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT host FROM mysql.user WHERE user = %s", (user,))
            hosts = {str(row[0]) for row in cursor.fetchall()}
            if "%" not in hosts:
                if "localhost" not in hosts:
                    raise LabScenarioError(f"the lab's database user {user} does not exist")
                cursor.execute("RENAME USER %s@'localhost' TO %s@'%%'", (user, user))
            cursor.execute(
                f"GRANT ALL PRIVILEGES ON `{lab.topology.db_name}`.* TO %s@'%%' WITH GRANT OPTION", (user,)
            )
            cursor.execute("GRANT CREATE USER ON *.* TO %s@'%%' WITH GRANT OPTION", (user,))
    finally:
        connection.close()


class AccountingPoller:
    """Asks every controller's slurmdbd (``sacctmgr show cluster``) again and again.

    Each controller's slurmctld talks to its own host's slurmdbd (AccountingStorageHost=
    localhost, as on HyperPod), so accounting is polled there; the login host has no slurmdbd.
    """

    def __init__(self, lab: Lab, hosts: Sequence[str]) -> None:
        self._lab = lab
        self._hosts = list(hosts)
        self._stop = threading.Event()
        # One thread per controller, so a slow answer on one does not hide the other.
        self._threads = [
            threading.Thread(target=self._loop, args=(host,), name=f"accounting-{host}", daemon=True)
            for host in self._hosts
        ]
        self._lock = threading.Lock()
        self.samples: list[tuple[float, str, bool]] = []

    def __enter__(self) -> AccountingPoller:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)
        self.samples.sort()

    def _loop(self, host: str) -> None:
        while not self._stop.is_set():
            answered = dbd_answers(self._lab, host)
            with self._lock:
                self.samples.append((time.time(), host, answered))
            self._stop.wait(POLL_INTERVAL_SECONDS)

    def outages(self, host: str) -> list[tuple[float, float]]:
        """(first failed poll, next answered poll) of every run of failures on ``host``."""
        found: list[tuple[float, float]] = []
        began: float | None = None
        last = 0.0
        for at, where, answered in self.samples:
            if where != host:
                continue
            last = at
            if not answered and began is None:
                began = at
            elif answered and began is not None:
                found.append((began, at))
                began = None
        if began is not None:
            found.append((began, last))
        return found

    def longest_blackout(self) -> float:
        """The longest time no controller's slurmdbd answered."""
        spans = [self.outages(host) for host in self._hosts]
        longest = 0.0
        for begin, end in spans[0]:
            overlaps = [(begin, end)]
            for others in spans[1:]:
                overlaps = [
                    (max(a, c), min(b, d)) for a, b in overlaps for c, d in others if max(a, c) < min(b, d)
                ]
            longest = max([longest, *(b - a for a, b in overlaps)])
        return longest


@contextlib.contextmanager
def recorded_invocations(function_arn: str) -> Iterator[list[dict[str, Any]]]:
    """What Secrets Manager's invocations of the rotation function returned (moto drops it)."""
    from moto.awslambda_simple.models import LambdaSimpleBackend

    routed = LambdaSimpleBackend.invoke
    calls: list[dict[str, Any]] = []

    def recording(
        backend: Any,
        function_name: str,
        qualifier: str | None = None,
        body: Any = None,
        headers: Any = None,
        response_headers: Any = None,
    ) -> Any:
        answer = routed(backend, function_name, qualifier, body, headers, response_headers)
        if function_name == function_arn:
            calls.append(
                {
                    "event": json.loads(body) if body else {},
                    "error": (response_headers or {}).get("x-amz-function-error"),
                    "result": json.loads(answer) if answer else None,
                }
            )
        return answer

    LambdaSimpleBackend.invoke = recording  # type: ignore[method-assign,assignment]
    try:
        yield calls
    finally:
        LambdaSimpleBackend.invoke = routed  # type: ignore[method-assign]


def _batch_job(lab: Lab, label: str) -> str:
    """Run a one-node job to its end; its job id."""
    name = f"hpha-{label}-{secrets.token_hex(3)}"
    done = lab.client(
        [
            "sbatch",
            "--wait",
            "--parsable",
            "--output=/dev/null",
            "-J",
            name,
            "--nodes=1",
            "--wrap",
            "hostname",
        ],
        timeout=60,
    )
    if done.returncode != 0:
        raise LabScenarioError(f"the {label} job failed: {done.stderr.strip()[-200:]}")
    return done.stdout.strip().split(";", 1)[0]


def _accounted(lab: Lab, host: str, job_ids: Sequence[str]) -> dict[str, str]:
    """Job id -> state, as ``sacct`` on ``host`` reports them once all are COMPLETED (or the last answer)."""
    seen: dict[str, str] = {}

    def completed() -> bool | None:
        done = lab.exec(
            host, ["sacct", "-X", "-n", "-P", "-j", ",".join(job_ids), "-o", "jobid,state"], timeout=15
        )
        seen.clear()
        seen.update(
            {job: state for job, _, state in (line.partition("|") for line in done.stdout.splitlines())}
        )
        return True if all(seen.get(job) == "COMPLETED" for job in job_ids) else None

    poll(completed, ACCOUNTED_SECONDS, interval=1.0)
    return dict(seen)


def _step_outcome(result: dict[str, Any]) -> str:
    """A rotation step's outcome, or its error with the function's (redacted) reason."""
    if result.get("outcome"):
        return str(result["outcome"])
    return f"{result.get('errorType')} ({scrub_text(str(result.get('errorMessage', '')))[:200]})"


def _conf_facts(lab: Lab, host: str) -> tuple[str, str, int, int]:
    """StorageUser, StoragePass, mode and owner of ``host``'s slurmdbd.conf."""
    conf = lab.paths.host_etc(host) / "slurmdbd.conf"
    values = {key: value for key, _, value in (line.partition("=") for line in conf.read_text().splitlines())}
    info = conf.stat()
    return values.get("StorageUser", ""), values.get("StoragePass", ""), info.st_mode & 0o777, info.st_uid


def _rotate(drill: Drill) -> None:
    lab, run = drill.lab, drill.run
    controllers = controller_names(lab)
    user, password = _stored_credentials(lab)
    prepare_accounting_user(lab, user)
    secretsmanager = boto3.client("secretsmanager")
    arn = run.site.secret_arn
    # The sample stack's secret: username and password only (compact JSON, as the lifecycle
    # script's grep needs); host and port come from the function's DB_HOST and DB_PORT.
    secretsmanager.put_secret_value(
        SecretId=arn, SecretString=json.dumps({"username": user, "password": password}, separators=(",", ":"))
    )
    del password
    run.stack.override_environment(
        "RotateDbSecretFunction",
        COMMAND_TRANSPORT=LAB_TRANSPORT,
        SLURMDBD_CONF=LAB_SLURMDBD_CONF,
        SLURMDBD_OWNER="root",
        SLURMDBD_VERIFY_SECONDS=str(ROLLOUT_VERIFY_SECONDS),
        # The scenario rotates with alternating users (the template's default is single).
        ROTATION_STRATEGY="alternating",
    )
    # The template creates no rotation schedule by default (RotationDays 0): name the function.
    function_arn = run.stack.function("RotateDbSecretFunction").arn
    before = _batch_job(lab, "before")
    drill.note("job before the rotation", f"job {before} completed")
    pids = {name: lab.pid(name, "slurmdbd") for name in controllers}
    with AccountingPoller(lab, controllers) as poller, recorded_invocations(function_arn) as calls:
        drill.inject(
            "database secret rotated (alternating users) and rolled out to every controller",
            # RotationRules enable rotation on the secret, as the template's schedule would.
            lambda: secretsmanager.rotate_secret(
                SecretId=arn,
                RotationLambdaARN=function_arn,
                RotationRules={"AutomaticallyAfterDays": 30},
                RotateImmediately=True,
            ),
        )
    drill.note("rotation finished", f"{len(calls)} invocations of RotateDbSecretFunction")
    after = _batch_job(lab, "after")
    drill.note("job after the rotation", f"job {after} completed")

    steps = [(str(c["event"].get("Step")), c["error"], c["result"] or {}) for c in calls]
    drill.check(
        "Secrets Manager ran the four rotation steps without error",
        tuple(step for step, _, _ in steps) == ROTATION_STEPS and all(error is None for _, error, _ in steps),
        ", ".join(f"{step}: {_step_outcome(result)}" for step, _, result in steps),
    )
    current = json.loads(
        secretsmanager.get_secret_value(SecretId=arn, VersionStage=AWSCURRENT)["SecretString"]
    )
    previous = json.loads(
        secretsmanager.get_secret_value(SecretId=arn, VersionStage=AWSPREVIOUS)["SecretString"]
    )
    new_user = str(current.get("username"))
    drill.check(
        "AWSCURRENT names the other user of the pair, AWSPREVIOUS the old one",
        new_user == alternate_username(user) and previous.get("username") == user,
        f"{user} -> {new_user}",
    )
    finish = next((result for step, _, result in steps if step == "finishSecret"), {})
    rollout = finish.get("rollout") or {"complete": False, "controllers": []}
    outcomes = {str(c.get("instance_id")): c for c in rollout.get("controllers", [])}
    drill.check(
        "the roll-out updated every controller",
        rollout.get("complete") is True
        and len(outcomes) == len(controllers)
        and all(c.get("storage_user") == new_user for c in outcomes.values()),
        "; ".join(
            f"{iid}: {c.get('outcome')} in {c.get('seconds_to_answer')} s" for iid, c in outcomes.items()
        ),
    )
    restart_allowance: dict[str, float] = {}
    for name in controllers:
        host = lab.topology.host(name)
        stored_user, stored_password, mode, owner = _conf_facts(lab, name)
        pid = lab.pid(name, "slurmdbd")
        answers = dbd_answers(lab, name)
        drill.check(
            f"{name}: slurmdbd.conf holds the new credentials and slurmdbd answers with them",
            stored_user == new_user
            and secrets.compare_digest(stored_password, str(current.get("password")))
            and mode == 0o600
            and owner == 0
            and pid not in (None, pids[name])
            and answers,
            f"StorageUser={stored_user}, mode {mode:o}, owner uid {owner}, "
            f"slurmdbd pid {pids[name]} -> {pid}, sacctmgr {'answers' if answers else 'fails'}",
        )
        answered_in = outcomes.get(host.instance_id, {}).get("seconds_to_answer")
        restart_allowance[name] = float(answered_in or 0.0) + RESTART_STOP_ALLOWANCE_SECONDS
    longest = {
        name: max((end - begin for begin, end in poller.outages(name)), default=0.0) for name in controllers
    }
    blackout = poller.longest_blackout()
    drill.check(
        "accounting answered throughout: each slurmdbd failed only for its own restart, never all at once",
        all(longest[name] <= restart_allowance[name] for name in controllers)
        and all(len(poller.outages(name)) <= 1 for name in controllers)
        and blackout <= BLACKOUT_TOLERANCE_SECONDS,
        ", ".join(
            f"{name} failed {longest[name]:.1f} s (allowed {restart_allowance[name]:.1f} s)"
            for name in controllers
        )
        + f"; none answering for {blackout:.1f} s; {len(poller.samples)} polls",
    )
    states = _accounted(lab, drill.primary, [before, after])
    drill.check(
        "sacct shows the jobs run before and after the rotation",
        states.get(before) == "COMPLETED" and states.get(after) == "COMPLETED",
        ", ".join(f"job {job}: {states.get(job, 'missing')}" for job in (before, after)),
    )
    drill.details["rotation"] = {
        "strategy": "alternating",
        "previous_user": user,
        "current_user": new_user,
        "steps": [
            {"step": step, "outcome": result.get("outcome"), "error": error} for step, error, result in steps
        ],
        "rollout": rollout,
        "accounting": {
            "polls": len(poller.samples),
            "longest_outage_seconds": {name: round(value, 2) for name, value in longest.items()},
            "longest_without_any_slurmdbd_seconds": round(blackout, 2),
        },
        "jobs": {"before": before, "after": after, "states": states},
    }
    drill.operator_run("check the cluster after the database secret rotation")


ROTATION_SCENARIO: Final = LabScenario(
    "rotation",
    "the database secret rotated (alternating users) and rolled out to every controller's slurmdbd",
    _rotate,
    frozenset({"HEALTHY"}),
    "HEALTHY",
)
