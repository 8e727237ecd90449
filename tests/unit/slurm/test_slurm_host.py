"""The probe's identity and services sections."""

from __future__ import annotations

from hyperpod_ha.slurm import (
    parse_identity,
    parse_services,
)


def test_parse_identity_and_services() -> None:
    identity = parse_identity(
        "hostname=ctl1\nfqdn=ctl1.lab\naddress=127.0.0.1\naddress=10.214.0.11\nnow=17\nuid=0\n"
    )
    assert (identity.hostname, identity.addresses, identity.now) == ("ctl1", ("127.0.0.1", "10.214.0.11"), 17)
    services = parse_services(
        "systemctl slurmctld unavailable\n"
        "process slurmctld pid=7841 state=S ppid=1 threads=17 same_ns=yes\n"
        "process slurmctld pid=7842 state=S ppid=7841 threads=1 same_ns=no\n"
        "systemctl slurmdbd inactive\n"
    )
    assert services.systemctl == {"slurmctld": "unavailable", "slurmdbd": "inactive"}
    assert [(p.pid, p.ppid, p.state, p.threads, p.same_namespace) for p in services.processes] == [
        (7841, 1, "S", 17, True),
        (7842, 7841, "S", 1, False),
    ]
    # A line that is not the section's (a process gone while read) is skipped, not fatal.
    noisy = parse_services("bash: /proc/3001/status: No such file or directory\nprocess slurmctld state=S\n")
    assert noisy.processes == ()
