"""From the controllers' reports to one verdict: every verdict, and the situations of the captures.

Reports are built the way the health check builds them: probe sections made of captured
Slurm output (``hyperpod_ha_dev/captures``), run through ``report_from_result``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from hyperpod_ha.commands import CommandRequest, CommandResult, TargetUnreachable
from hyperpod_ha.health import (
    ControllerNode,
    ControllerReport,
    ReportStatus,
    check_controller,
    report_from_result,
)
from hyperpod_ha.slurm import ProbeSection
from hyperpod_ha.verdict import (
    DEGRADED,
    DOWN,
    FAILED_OVER,
    HEALTHY,
    SPLIT_BRAIN,
    UNKNOWN,
    VERIFIED,
    Verdict,
    VerdictInputError,
    VerdictName,
    VerdictPolicy,
    evaluate,
    reports_from_json,
)
from hyperpod_ha_dev import CAPTURES
from tests.fakes.probe_output import format_probe_output

STATE = "/srv/hplab/shared/state"
LOG = "/var/log/slurm/slurmctld.log"
ADDRESSES = {"ctl1": "10.214.0.11", "ctl2": "10.214.0.12", "ctl3": "10.214.0.13"}


def capture(name: str) -> str:
    return (CAPTURES / name).read_text().rstrip("\n")


def node(name: str, status: str = "Running") -> ControllerNode:
    instance_id = f"i-0{name}{'0' * (16 - len(name))}"
    return ControllerNode(
        instance_id=instance_id,
        group="controller-machine",
        status=status,
        private_ip=ADDRESSES[name],
        hostname=f"ip-{ADDRESSES[name].replace('.', '-')}",
        target=f"sagemaker-cluster:hplab0000001_controller-machine-{instance_id}",
    )


def two_controllers() -> str:
    return capture("show_config_lab.txt") + "\n" + capture("show_config_accounting_lab.txt")


def three_controllers() -> str:
    return (
        "SlurmctldHost[0]        = ctl1(10.214.0.11)\n"
        "SlurmctldHost[1]        = ctl2(10.214.0.12)\n"
        "SlurmctldHost[2]        = ctl3(10.214.0.13)\n"
        "SlurmctldTimeout        = 10 sec\n"
        f"StateSaveLocation       = {STATE}\n"
        "ClusterName             = lab"
    )


def ping_of_three(*up: bool) -> str:
    # scontrol's own format for three controllers: primary, backup1, backup2
    labels = ("primary", "backup1", "backup2")
    lines = [f"Slurmctld({labels[i]}) at ctl{i + 1} is {'UP' if u else 'DOWN'}" for i, u in enumerate(up)]
    if not all(up):
        lines += ["*" * 41, "** RESTORE SLURMCTLD DAEMON TO SERVICE **", "*" * 41]
    return "\n".join(lines)


def heartbeat_bytes(writer: int) -> tuple[int, str]:
    """The captured heartbeat of that writer (02: writer 0, 04b: writer 1); others built alike."""
    fixture = CAPTURES / f"heartbeat_writer{writer}.bin"
    data = (
        fixture.read_bytes()
        if fixture.exists()
        else (1795995100).to_bytes(8, "big") + writer.to_bytes(8, "big")
    )
    return int.from_bytes(data[:8], "big"), " ".join(str(b) for b in data)


def s(name: str, text: str, rc: int = 0, timed_out: bool = False) -> ProbeSection:
    return ProbeSection(name=name, text=text, exit_code=rc, millis=10, timed_out=timed_out, truncated=False)


@dataclass
class Probe:
    """What one controller's probe saw; the defaults are a healthy primary (captures 01 and 03)."""

    name: str = "ctl1"
    slurmctld: str | None = "S"  # /proc state of slurmctld, None: not running
    log: str | None = "slurmctld_log_ctl1_primary.txt"  # fixture name or text; None: no role line
    ping: str | None = "ping_all_up.txt"  # fixture name or text; None: timed out
    ping_rc: int = 0
    heartbeat: tuple[int, int] | str = (0, 1)  # (writer, age) or "missing" / "timeout"
    dbd: str = "sacctmgr_cluster_ctl1.txt"
    dbd_rc: int = 0
    sdiag: str = "sdiag_dbd_queue_empty.txt"
    sinfo: str = "sinfo_idle.txt"
    sinfo_rc: int = 0
    writable: bool | None = True  # None: the check timed out
    fstype: str = "lustre"
    config: str = field(default_factory=two_controllers)
    now_local: str = "2026-11-29T23:40:00"  # the node's clock when the probe read the log

    def text_of(self, value: str) -> str:
        return capture(value) if value.endswith(".txt") else value

    def sections(self) -> list[ProbeSection]:
        def s(name: str, text: str, rc: int = 0, timed_out: bool = False) -> ProbeSection:
            return ProbeSection(
                name=name, text=text, exit_code=rc, millis=10, timed_out=timed_out, truncated=False
            )

        services = "systemctl slurmctld " + ("active" if self.slurmctld else "inactive")
        if self.slurmctld:
            services += f"\nprocess slurmctld pid=7841 state={self.slurmctld} ppid=1 threads=17 same_ns=yes"
        role = f"now_local={self.now_local}\nsource=file:{LOG}"
        if self.log:
            role += "\n" + self.text_of(self.log)
        return [
            s("identity", f"hostname={self.name}\naddress={ADDRESSES[self.name]}\nnow=1795995200"),
            s("services", services + "\nsystemctl slurmdbd inactive"),
            s("slurm_conf", "path=", 1),
            s("config", self.config + f"\nSlurmctldLogFile        = {LOG}"),
            s("ping", "", 124, True)
            if self.ping is None
            else s("ping", self.text_of(self.ping), self.ping_rc),
            s("sinfo", capture(self.sinfo), self.sinfo_rc),
            s("sdiag", capture(self.sdiag)),
            s("dbd_clusters", self.text_of(self.dbd), self.dbd_rc),
            s("dbd_ping", capture("sacctmgr_ping_invalid_keyword.txt"), 1),
            s("role", role, 0 if self.log else 1),
            self.heartbeat_section(),
            self.state_save_section(),
        ]

    def heartbeat_section(self) -> ProbeSection:
        if self.heartbeat == "timeout":
            return s("heartbeat", "", 124, True)
        if self.heartbeat == "missing":
            return s("heartbeat", f"path={STATE}/heartbeat\nexists=no\nnow=1795995200", 1)
        assert isinstance(self.heartbeat, tuple)
        writer, age = self.heartbeat
        beat, data = heartbeat_bytes(writer)
        text = f"path={STATE}/heartbeat\nexists=yes\nsize=16\nmtime={beat}\nnow={beat + age}\nbytes={data}"
        return s("heartbeat", text)

    def state_save_section(self) -> ProbeSection:
        if self.writable is None:
            return s("state_save", f"path={STATE}\nexists=yes\nerror=timed out creating a file", 124)
        text = f"path={STATE}\nexists=yes\nowner=slurm\nmount_target=/srv\nfstype={self.fstype}\nsource=fsx"
        text += "\nwritable=yes" if self.writable else "\nwritable=no\nwrite_error=Read-only file system"
        return s("state_save", text)

    def report(self) -> ControllerReport:
        output = format_probe_output(self.sections())
        return report_from_result(node(self.name), CommandResult(output, "", 0, 1.5, "test"))


@dataclass
class Unreachable:
    """A controller SSM cannot reach."""

    name: str

    def report(self) -> ControllerReport:
        class Runner:
            transport = "session-manager"

            def run(self, request: CommandRequest) -> CommandResult:
                raise TargetUnreachable(f"TargetNotConnected: {request.target} is not connected")

        return check_controller(node(self.name), Runner(), document="ProbeDocument", deadline_seconds=60)


def verdict_of(*controllers: Probe | Unreachable, policy: VerdictPolicy | None = None) -> Verdict:
    verdict = evaluate([c.report() for c in controllers], policy)
    # the verdict always survives its own JSON
    assert json.loads(json.dumps(verdict.to_json()))["verdict"] == verdict.name.value
    return verdict


# Standby ctl2 in the all-up cluster of 01/03: its log says background mode; ping says UP.
STANDBY = Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt")
# ctl1 after SIGKILL (04): no process; ping sees it DOWN; the heartbeat is ctl2's.
CTL1_KILLED = Probe(
    name="ctl1",
    slurmctld=None,
    ping="ping_primary_down.txt",
    heartbeat=(1, 1),
    dbd="sacctmgr_cluster_ctl2.txt",
)
# ctl2 after its takeover (04): its log ends "Running as primary controller".
CTL2_TOOK_OVER = Probe(
    name="ctl2",
    log="slurmctld_log_ctl2_takeover.txt",
    ping="ping_primary_down.txt",
    heartbeat=(1, 1),
    dbd="sacctmgr_cluster_ctl2.txt",
    sinfo="sinfo_mixed_idle.txt",
)


@dataclass(frozen=True)
class Case:
    id: str
    controllers: tuple[Probe | Unreachable, ...]
    verdict: VerdictName
    active: str | None
    reasons: tuple[str, ...] = ()  # each must appear in some reason
    policy: VerdictPolicy | None = None


CASES = [
    Case(
        "all up: ctl1 active, the standby backup answers ping UP and stays standby",
        (Probe(), STANDBY),
        HEALTHY,
        "ctl1",
        (
            "ctl1 (configured primary) is active: logged 'Running as primary controller'",
            "writes the heartbeat",
            "ctl2: slurmctld running, logged 'slurmctld running in background mode' (standby)",
        ),
    ),
    Case(
        "killed primary, backup took over (04)",
        (CTL1_KILLED, CTL2_TOOK_OVER),
        FAILED_OVER,
        "ctl2",
        (
            "ctl2 (SlurmctldHost[1]) took over from ctl1",
            "ctl1 (the configured primary): slurmctld not running",
        ),
    ),
    Case(
        "no role line anywhere: the heartbeat's writer index says ctl1 is active",
        (Probe(log=None), Probe(name="ctl2", log=None)),
        HEALTHY,
        "ctl1",
        ("writes the heartbeat (last beat 1 s ago)",),
    ),
    Case(
        "no role line anywhere: the heartbeat's writer index says ctl2 took over",
        (
            Probe(
                log=None,
                slurmctld=None,
                ping="ping_primary_down.txt",
                heartbeat=(1, 2),
                dbd="sacctmgr_cluster_ctl2.txt",
            ),
            Probe(
                name="ctl2",
                log=None,
                ping="ping_primary_down.txt",
                heartbeat=(1, 2),
                dbd="sacctmgr_cluster_ctl2.txt",
            ),
        ),
        FAILED_OVER,
        "ctl2",
        ("ctl2 (SlurmctldHost[1]) took over from ctl1: writes the heartbeat (last beat 2 s ago)",),
    ),
    Case(
        "hung primary (stopped, ping DOWN), before SlurmctldTimeout: nobody is active yet",
        (
            Probe(slurmctld="T", ping=None, heartbeat=(0, 8)),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_standby.txt",
                ping="ping_primary_down.txt",
                heartbeat=(0, 8),
            ),
        ),
        DOWN,
        None,
        (
            "ctl1 still holds the heartbeat (last beat 8 s ago) but its slurmctld does not answer",
            "SlurmctldTimeout (10 s)",
        ),
    ),
    Case(
        "hung primary still running (deadlocked): ping DOWN everywhere, nobody active yet",
        (
            Probe(ping="ping_primary_down.txt", heartbeat=(0, 9)),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_standby.txt",
                ping="ping_primary_down.txt",
                heartbeat=(0, 9),
            ),
        ),
        DOWN,
        None,
        ("ctl1 still holds the heartbeat",),
    ),
    Case(
        "hung primary, backup took over after SlurmctldTimeout",
        (Probe(slurmctld="T", ping=None, heartbeat=(1, 1), dbd="sacctmgr_cluster_ctl2.txt"), CTL2_TOOK_OVER),
        FAILED_OVER,
        "ctl2",
        ("ctl1: slurmctld stopped (process state T): the old primary asks for control back",),
    ),
    Case(
        "the old primary wakes up: both act as primary for a moment",
        (Probe(heartbeat=(0, 0)), CTL2_TOOK_OVER),
        SPLIT_BRAIN,
        None,
        ("2 controllers act as the active one", "ctl1 is active", "ctl2 is active"),
    ),
    Case(
        "the old primary took control back (05): ctl2 is standby again",
        (
            Probe(log="slurmctld_log_ctl1_restart.txt"),
            Probe(name="ctl2", log="slurmctld_log_ctl2_control_back.txt"),
        ),
        HEALTHY,
        "ctl1",
        (),
    ),
    Case(
        "scontrol takeover (06): the primary saved its state and exited, ctl2 is active",
        (
            Probe(
                log="slurmctld_log_ctl1_takeover_shutdown.txt",
                slurmctld=None,
                ping="ping_primary_down.txt",
                heartbeat=(1, 1),
            ),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_takeover_requested.txt",
                ping="ping_primary_down.txt",
                heartbeat=(1, 1),
                dbd="sacctmgr_cluster_ctl2.txt",
            ),
        ),
        FAILED_OVER,
        "ctl2",
        (),
    ),
    Case(
        "primary cut off, unreachable by SSM too: fresh heartbeat, the backup stays standby (10)",
        (
            Unreachable("ctl1"),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_standby.txt",
                ping="ping_primary_down.txt",
                sinfo="sinfo_standby_mode.txt",
                sinfo_rc=1,
            ),
        ),
        DOWN,
        None,
        (
            "ctl1 writes the heartbeat (last beat 1 s ago) but no checked controller reaches it",
            "network partition?",
        ),
    ),
    Case(
        "primary cut off from the other controller, both checked (10): not verified",
        (
            Probe(
                ping="Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is DOWN",
                sinfo="sinfo_down_not_responding.txt",
            ),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_standby.txt",
                ping="ping_primary_down.txt",
                sinfo="sinfo_standby_mode.txt",
                sinfo_rc=1,
            ),
        ),
        DEGRADED,
        "ctl1",
        (
            "ctl2 cannot reach the active controller ctl1",
            "ctl2: sinfo: slurm_load_partitions: Slurm backup controller in standby mode",
            "standby ctl2 does not answer ping from ctl1",
        ),
    ),
    Case(
        "two controllers both claiming to be active, each read its own heartbeat",
        (
            Probe(heartbeat=(0, 0)),
            Probe(name="ctl2", log="slurmctld_log_ctl2_takeover.txt", heartbeat=(1, 0)),
        ),
        SPLIT_BRAIN,
        None,
        ("heartbeat written by ctl1 and ctl2 within moments",),
    ),
    Case(
        "slurmdbd down while scheduling works (08)",
        (
            Probe(dbd="sacctmgr_cluster_refused.txt", dbd_rc=1, sdiag="sdiag_dbd_queue_growing.txt"),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_standby.txt",
                dbd="sacctmgr_cluster_refused.txt",
                dbd_rc=1,
            ),
        ),
        DEGRADED,
        "ctl1",
        ("slurmdbd does not answer", "Connection refused", "3 accounting records wait"),
    ),
    Case(
        "slurmdbd refuses its database password (09)",
        (
            Probe(dbd="sacctmgr_cluster_db_access_denied.txt", dbd_rc=1),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_standby.txt",
                dbd="sacctmgr_cluster_db_access_denied.txt",
                dbd_rc=1,
            ),
        ),
        DEGRADED,
        "ctl1",
        ("Unable to connect to database",),
    ),
    Case(
        "StateSaveLocation unwritable on the active controller",
        (Probe(writable=False), STANDBY),
        DEGRADED,
        "ctl1",
        (f"ctl1: StateSaveLocation {STATE} is not writable (Read-only file system)",),
    ),
    Case(
        "StateSaveLocation check hangs on the standby",
        (Probe(), Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", writable=None)),
        DEGRADED,
        "ctl1",
        ("ctl2: StateSaveLocation check: timed out creating a file",),
    ),
    Case(
        "the controllers see StateSaveLocation on different file systems",
        (Probe(), Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", fstype="ext4")),
        DEGRADED,
        "ctl1",
        ("different file systems: ext4 on ctl2; lustre on ctl1",),
    ),
    Case(
        "StateSaveLocation is not on the expected file system type",
        (Probe(fstype="ext4"), Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", fstype="ext4")),
        DEGRADED,
        "ctl1",
        ("StateSaveLocation is on ext4, expected lustre",),
        VerdictPolicy(expected_state_fstypes=frozenset({"lustre"})),
    ),
    Case(
        "the heartbeat cannot be read on the standby",
        (Probe(), Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", heartbeat="timeout")),
        DEGRADED,
        "ctl1",
        ("ctl2: heartbeat: timed out", "could not take over"),
    ),
    Case(
        "the active controller does not write the heartbeat",
        (
            Probe(heartbeat=(0, 90)),
            Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", heartbeat=(0, 90)),
        ),
        DEGRADED,
        "ctl1",
        ("the active controller does not write the heartbeat: last beat 90 s ago by ctl1",),
    ),
    Case(
        "slurmdbd has the other controller registered",
        (Probe(dbd="sacctmgr_cluster_ctl2.txt"), STANDBY),
        DEGRADED,
        "ctl1",
        ("slurmdbd has ctl2 (10.214.0.12) registered as the controller, but ctl1 is active",),
    ),
    Case(
        "no controller registered with slurmdbd",
        (Probe(dbd="sacctmgr_cluster_none.txt"), STANDBY),
        DEGRADED,
        "ctl1",
        ("no controller is registered with slurmdbd",),
    ),
    Case(
        "a backup in the middle of taking over while the primary is active",
        (Probe(), Probe(name="ctl2", log="slurmctld_log_ctl1_takeover_shutdown.txt")),
        DEGRADED,
        "ctl1",
        ("ctl2: slurmctld running, logged a terminate signal last", "answers ping while ctl1 is active"),
    ),
    Case(
        "the old primary restarting while the backup is active: starting, not hung (seen in the lab)",
        (
            # 05 at T0+1 s: ctl1 logged its start only; ping shows it DOWN, ctl2 still in control
            Probe(
                log=capture("slurmctld_log_ctl1_restart.txt").splitlines()[0],
                ping="ping_primary_down.txt",
                heartbeat=(1, 1),
                dbd="sacctmgr_cluster_ctl2.txt",
            ),
            CTL2_TOOK_OVER,
        ),
        DEGRADED,
        "ctl2",
        (
            "ctl1: slurmctld running, logged a start but no role yet",
            "does not answer ping while ctl2 is active",
        ),
    ),
    Case(
        "standby slurmctld not running",
        (
            Probe(ping="Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is DOWN"),
            Probe(name="ctl2", slurmctld=None, log="slurmctld_log_ctl2_standby.txt"),
        ),
        DEGRADED,
        "ctl1",
        ("standby ctl2: slurmctld not running",),
    ),
    Case(
        "three controllers: primary active, backup1 and backup2 standby",
        (
            Probe(config=three_controllers(), ping=ping_of_three(True, True, True)),
            Probe(
                name="ctl2",
                config=three_controllers(),
                ping=ping_of_three(True, True, True),
                log="slurmctld_log_ctl2_standby.txt",
            ),
            Probe(
                name="ctl3",
                config=three_controllers(),
                ping=ping_of_three(True, True, True),
                log="slurmctld_log_ctl2_standby.txt",
            ),
        ),
        HEALTHY,
        "ctl1",
        ("ctl2: slurmctld running", "ctl3: slurmctld running"),
    ),
    Case(
        "three controllers: backup2 took over, backup1 stays standby",
        (
            Probe(
                config=three_controllers(),
                slurmctld=None,
                ping=ping_of_three(False, True, True),
                heartbeat=(2, 1),
            ),
            Probe(
                name="ctl2",
                config=three_controllers(),
                ping=ping_of_three(False, True, True),
                log="slurmctld_log_ctl2_standby.txt",
                heartbeat=(2, 1),
            ),
            Probe(
                name="ctl3",
                config=three_controllers(),
                ping=ping_of_three(False, True, True),
                log="slurmctld_log_ctl2_takeover.txt",
                heartbeat=(2, 1),
                dbd="lab|10.214.0.13|6817",
            ),
        ),
        FAILED_OVER,
        "ctl3",
        ("ctl3 (SlurmctldHost[2]) took over from ctl1",),
    ),
    Case(
        "a standby unreachable by SSM that answers ping",
        (Probe(), Unreachable("ctl2")),
        HEALTHY,
        "ctl1",
        ("ctl2 could not be checked (TargetUnreachable) but answers ping",),
    ),
    Case(
        "a standby unreachable by SSM that does not answer ping",
        (
            Probe(ping="Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is DOWN"),
            Unreachable("ctl2"),
        ),
        DEGRADED,
        "ctl1",
        ("standby ctl2 could not be checked (TargetUnreachable",),
    ),
    Case(
        "the old primary unreachable by SSM after the failover",
        (Unreachable("ctl1"), CTL2_TOOK_OVER),
        FAILED_OVER,
        "ctl2",
        ("ctl1 (the configured primary) is not active: TargetUnreachable",),
    ),
    Case(
        "the active primary unreachable by SSM: heartbeat and ping say it serves, but it is unchecked",
        (Unreachable("ctl1"), STANDBY),
        DEGRADED,
        "ctl1",
        ("the active controller ctl1 could not be checked (TargetUnreachable",),
    ),
    Case(
        "both controllers down (07)",
        (
            Probe(
                slurmctld=None,
                ping="ping_both_down.txt",
                ping_rc=1,
                heartbeat=(0, 60),
                sinfo="sinfo_connect_failure.txt",
                sinfo_rc=1,
            ),
            Probe(
                name="ctl2",
                slurmctld=None,
                log="slurmctld_log_ctl2_standby.txt",
                ping="ping_both_down.txt",
                ping_rc=1,
                heartbeat=(0, 60),
                sinfo="sinfo_connect_failure.txt",
                sinfo_rc=1,
            ),
        ),
        DOWN,
        None,
        ("no controller is active", "nobody writes the heartbeat: last beat 60 s ago by ctl1"),
    ),
    Case(
        "no controller could be checked",
        (Unreachable("ctl1"), Unreachable("ctl2")),
        UNKNOWN,
        None,
        ("no controller could be checked", "ip-10-214-0-11: unreachable: TargetUnreachable"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_verdict(case: Case) -> None:
    verdict = verdict_of(*case.controllers, policy=case.policy)
    assert verdict.name is case.verdict, verdict.reasons
    assert verdict.active_controller == case.active
    assert verdict.verified is (case.verdict in VERIFIED)
    for expected in case.reasons:
        assert any(expected in reason for reason in verdict.reasons), (expected, verdict.reasons)


def test_every_verdict_is_covered() -> None:
    assert {case.verdict for case in CASES} == set(VerdictName)


def test_only_healthy_and_failed_over_are_verified() -> None:
    assert {HEALTHY, FAILED_OVER} == VERIFIED
    for case in CASES:
        if "cut off" in case.id:
            assert case.verdict not in VERIFIED


def test_a_ping_label_is_not_who_is_active() -> None:
    # ctl2 answers "Slurmctld(backup) ... is UP" after taking over, and before, in standby.
    before = verdict_of(Probe(), STANDBY)
    after = verdict_of(CTL1_KILLED, CTL2_TOOK_OVER)
    assert before.evidence["ctl2"]["answers_ping"] is True
    assert before.evidence["ctl2"]["active"] is False
    assert after.evidence["ctl2"]["active"] is True
    assert after.evidence["ctl2"]["logged_role"] == "primary"


def test_no_reports_at_all() -> None:
    verdict = evaluate([])
    assert verdict.name is UNKNOWN
    assert verdict.configured_primary is None
    assert verdict.evidence == {}


def test_verdict_json() -> None:
    verdict = evaluate([Probe().report(), STANDBY.report()], attempt=2)
    data = verdict.to_json()
    assert set(data) == {
        "verdict",
        "verified",
        "reasons",
        "active_controller",
        "configured_primary",
        "evidence",
        "attempt",
    }
    assert (data["verdict"], data["verified"], data["active_controller"], data["configured_primary"]) == (
        "HEALTHY",
        True,
        "ctl1",
        "ctl1",
    )
    assert data["attempt"] == 2
    assert data["evidence"]["ctl1"] == {
        "position": 0,
        "instance_id": "i-0ctl1000000000000",
        "status": "CHECKED",
        "reason": None,
        "active": True,
        "answers_ping": True,
        "writes_heartbeat": True,
        "slurmctld": "running",
        "logged_role": "primary",
        "takeover_refusal": None,
        "slurmdbd_reachable": True,
        "state_save_writable": True,
        "heartbeat_age_seconds": 1,
        "heartbeat_writer": "ctl1",
        "sinfo_answers": True,
    }


def test_reports_from_json_keep_bad_entries_as_unchecked() -> None:
    good = Probe().report().to_json()
    caught = {"Error": "States.TaskFailed", "Cause": '{"errorMessage": "boom"}'}
    reports = reports_from_json([good, {"instance_id": "i-0bad", "status": "MAYBE"}, caught, "junk"])
    assert [r.status for r in reports] == [ReportStatus.CHECKED] + [ReportStatus.PROBE_FAILED] * 3
    assert reports[1].instance_id == "i-0bad"
    assert reports[1].reason is not None
    assert reports[1].reason.startswith("report unreadable: report.status is not one of")
    assert reports[2].reason == "health check failed: States.TaskFailed"
    verdict = evaluate(reports)
    assert verdict.name is DEGRADED  # checks that gave nothing may hide any controller
    assert "the check of i-0bad gave no evidence: report unreadable" in " ".join(verdict.reasons)
    with pytest.raises(VerdictInputError):
        reports_from_json({"reports": []})


def test_verdict_json_is_bounded() -> None:
    reports = [Unreachable("ctl1").report()] * 40
    long = ControllerReport(instance_id="i-" + "x" * 300, status=ReportStatus.UNREACHABLE, reason="y" * 300)
    verdict = evaluate([*reports, long])
    assert len(verdict.reasons) <= 24
    assert all(len(reason) <= 240 for reason in verdict.reasons)
    assert len(json.dumps(verdict.to_json())) <= 32 * 1024
