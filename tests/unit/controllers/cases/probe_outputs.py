"""One controller's probe output, assembled from captured command output: what the report
tests feed the health check (through ``tests.fakes.canned_runner``)."""

from __future__ import annotations

from hyperpod_ha.commands import CommandResult
from hyperpod_ha.controllers.models import Controller
from hyperpod_ha.slurm import ProbeSection, parse_probe_output
from hyperpod_ha_dev import CAPTURES
from tests.fakes.probe_output import format_probe_output

OWN_DOCUMENT = "hyperpod-ha-ControllerProbeDocument-abc"

CONTROLLER_JSON = {
    "instance_id": "i-0aaaaaaaaaaaaaaa1",
    "group": "controller-machine",
    "status": "Running",
    "private_ip": "10.214.0.11",
    "hostname": "ip-10-214-0-11",
    "target": "sagemaker-cluster:hplab0000001_controller-machine-i-0aaaaaaaaaaaaaaa1",
}
NODE = Controller.from_json(CONTROLLER_JSON)


def capture(name: str) -> str:
    return (CAPTURES / name).read_text().rstrip("\n")


def section(name: str, text: str, rc: int = 0, *, timed_out: bool = False) -> ProbeSection:
    return ProbeSection(name=name, text=text, exit_code=rc, millis=20, timed_out=timed_out, truncated=False)


def primary_sections() -> dict[str, ProbeSection]:
    """ctl1 as the captures show it with everything up (01, 03)."""
    beat = " ".join(str(b) for b in (CAPTURES / "heartbeat_writer0.bin").read_bytes())
    return {
        s.name: s
        for s in [
            section(
                "identity", "hostname=ctl1\nfqdn=ctl1\naddress=127.0.0.1\naddress=10.214.0.11\nnow=1795995006"
            ),
            section(
                "services",
                "systemctl slurmctld active\n"
                "process slurmctld pid=7841 state=S ppid=1 threads=17 same_ns=yes\n"
                "process slurmctld pid=7842 state=S ppid=7841 threads=1 same_ns=yes\n"
                "process slurmctld pid=7891 state=S ppid=1 threads=5 same_ns=no\n"
                "systemctl slurmdbd inactive",
            ),
            section("slurm_conf", "path=", 1),
            section(
                "config",
                capture("show_config_lab.txt")
                + "\n"
                + capture("show_config_accounting_lab.txt")
                + "\nSlurmctldLogFile        = /var/log/slurm/slurmctld.log",
            ),
            section("ping", capture("ping_all_up.txt")),
            section("sinfo", capture("sinfo_idle.txt")),
            section("sdiag", capture("sdiag_dbd_queue_empty.txt")),
            section("dbd_clusters", capture("sacctmgr_cluster_ctl1.txt")),
            section("dbd_ping", capture("sacctmgr_ping_invalid_keyword.txt"), 1),
            section(
                "role",
                "now_local=2026-11-29T23:30:00\nsource=file:/var/log/slurm/slurmctld.log\n"
                + capture("slurmctld_log_ctl1_primary.txt"),
            ),
            section(
                "heartbeat",
                "path=/srv/hplab/shared/state/heartbeat\nexists=yes\nsize=16\nmtime=1795995004\n"
                f"now=1795995006\nbytes={beat}",
            ),
            section(
                "state_save",
                "path=/srv/hplab/shared/state\nexists=yes\nowner=root\nmode=755\nmount_target=/srv\n"
                "fstype=lustre\nsource=10.214.0.5@tcp:/fsx\nwritable=yes",
            ),
            section("failover_conf", captured_section("probe_ctl1_24_11.txt", "failover_conf")),
        ]
    }


def captured_section(probe_capture: str, name: str) -> str:
    """One section of a probe output captured on the lab (24.11)."""
    return parse_probe_output(capture(probe_capture)).sections[name].text


def probe_text(**changes: ProbeSection | None) -> str:
    sections = primary_sections()
    for name, changed in changes.items():
        if changed is None:
            del sections[name]
        else:
            sections[name] = changed
    return format_probe_output(sections.values())


def result(stdout: str, *, exit_code: int | None = 0, stderr: str | None = "") -> CommandResult:
    return CommandResult(
        stdout=stdout, stderr=stderr, exit_code=exit_code, duration_seconds=2.5, transport="fake"
    )
