"""``hyperpod-ha lab up|fault|verify|chaos|status|down``: the real Slurm lab, driven by an operator (root).

A bad fault, host or option, or a lab that is not up where one is needed, gets one line on
stderr and exit code 2, and nothing is changed. ``verify`` exits 0 when the verdict is
verified (HEALTHY or FAILED_OVER), 1 when not; ``chaos`` 0 when the run passed, 1 when not.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from hyperpod_ha_dev.cli import project_root, result_stream

PASSWORD_ENV = "HYPERPOD_LAB_DB_PASSWORD"  # noqa: S105 (a variable name, not a password)
USAGE_ERROR = 2
# hyperpod_lab.faults.FAULTS, named here so that the command's help needs no lab import.
FAULT_NAMES = (
    "kill",
    "stop",
    "cont",
    "start",
    "cut",
    "heal",
    "dbd-stop",
    "dbd-start",
    "state-ro",
    "state-rw",
    "heartbeat-unreadable",
    "heartbeat-readable",
    "conf-drift",
    "onprog-off",
    "conf-shared",
    "crash-loop",
    "crash-fixed",
    "rpc-flood",
    "job-flood",
    "forged-log",
)


def add_lab_parser(commands: Any) -> None:
    """The ``lab`` command and its subcommands."""
    lab = commands.add_parser("lab", help="the real Slurm HA lab on this machine (root)")
    sub = lab.add_subparsers(dest="lab_command", required=True)
    up = sub.add_parser("up", help="bring the lab up (reused when it runs as asked)")
    up.add_argument(
        "--slurm", default="24.11", help="24.11 (default) or 25.11 (each built here once) or 22.05 (Debian's)"
    )
    up.add_argument("--slurm-source", type=Path, help="25.11's source tarball (default: the lab's)")
    up.add_argument("--sha256", help="that tarball's sha256 (default: its line in SHA256SUMS beside it)")
    up.add_argument("--controllers", type=int, default=2, help="2 or 3")
    up.add_argument("--nodes", type=int, default=2, help="1 or 2")
    fault = sub.add_parser("fault", help="inject a fault into the running lab")
    fault.add_argument("fault", help=", ".join(FAULT_NAMES))
    fault.add_argument("host", help="ctl1, ctl2, ctl3, node1, node2")
    verify = sub.add_parser("verify", help="run the workflow against the lab as it is now")
    verify.add_argument("--json", action="store_true", help="one JSON object instead of the timeline")
    verify.add_argument(
        "--restore",
        choices=("off", "standbys", "all"),
        default="off",
        help="RestoreRedundancy of the run (default off: the lab is left as it is)",
    )
    chaos = sub.add_parser(
        "chaos",
        help="random faults, each healed after a random delay, while the stack watches; then the count",
    )
    chaos.add_argument(
        "--minutes", type=float, required=True, help="how long faults are injected (then a settle)"
    )
    chaos.add_argument(
        "--seed", type=int, required=True, help="the schedule's seed (the same seed, the same faults)"
    )
    chaos.add_argument(
        "--restore", choices=("off", "standbys", "all"), default="off", help="RestoreRedundancy of the stack"
    )
    chaos.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    status = sub.add_parser("status", help="what runs where")
    status.add_argument("--json", action="store_true")
    down = sub.add_parser("down", help="remove the lab and everything it made")
    for command in (up, fault, verify, chaos, status, down):
        command.add_argument(
            "--root",
            type=Path,
            help="the lab's directory (default: /srv/hplab, or /srv/hplabN with HYPERPOD_LAB_SLOT=N)",
        )


def run_lab_command(args: argparse.Namespace) -> int:
    from hyperpod_ha_dev.simulation.lab import lab_lock
    from hyperpod_ha_dev.simulation.lab.chaos_plan import ChaosPlanError
    from hyperpod_ha_dev.simulation.lab.verify import LabNotUp
    from hyperpod_lab import Lab, LabConfigError, LabError, Topology
    from hyperpod_lab.faults import LabFaultError

    out = result_stream()
    try:
        if args.lab_command == "up":
            # Checked before anything starts: a bad option changes nothing.
            topology = Topology(
                controllers=args.controllers, nodes=args.nodes, root=args.root or Path(), slurm=args.slurm
            )
            with lab_lock():
                lab = Lab(topology)
                report = lab.up(
                    os.environ.get(PASSWORD_ENV) or None, slurm_source=args.slurm_source, sha256=args.sha256
                )
                data: dict[str, Any] = {
                    "seconds": round(report.seconds, 2),
                    "reused": report.reused,
                    "built_slurm": report.built_slurm,
                    **lab.status(),
                }
            _print(out, data, as_json=True)
            return 0
        lab = Lab(root=args.root)
        runs = {
            "fault": lambda: _fault(out, lab, args.fault, args.host),
            "verify": lambda: _verify(out, lab, as_json=args.json, restore=args.restore),
            "chaos": lambda: _chaos(out, lab, args),
        }
        if args.lab_command in runs:
            return runs[args.lab_command]()
        if args.lab_command == "status":
            _print(out, lab.status(), as_json=args.json)
        else:
            with lab_lock():
                removed = lab.down()
            _print(out, {"removed": removed, "leftovers": lab.leftovers()}, as_json=True)
        return 0
    except (LabConfigError, LabFaultError, LabNotUp, ChaosPlanError) as problem:
        print(f"hyperpod-ha lab {args.lab_command}: {problem}", file=sys.stderr)
        return USAGE_ERROR
    except LabError as problem:
        print(f"hyperpod-ha lab {args.lab_command}: {problem.reason}", file=sys.stderr)
        return 1


def _fault(out: Any, lab: Any, fault: str, host: str) -> int:
    from hyperpod_ha_dev.simulation.lab import lab_lock
    from hyperpod_lab.faults import check, inject

    check(lab, fault, host)  # before the lock: a refusal never waits for another user of the lab
    with lab_lock():
        record = inject(lab, fault, host)
    print(f"{record['fault']} on {record['host']}: {record.get('detail') or record['summary']}", file=out)
    out.flush()
    return 0


def _verify(out: Any, lab: Any, *, as_json: bool, restore: str = "off") -> int:
    from hyperpod_ha_dev.simulation.lab.verify import slurm_version, verify_lab

    follow = None
    # The timeline as the run goes (a lab that is not up is refused first, with nothing printed);
    # with --json only the one object at the end.
    if not as_json and lab.is_up():
        print(f"lab verification (Slurm {slurm_version(lab)})", file=out, flush=True)
        follow = _printed(out)
    verification = verify_lab(lab, project_root(), follow=follow, restore=restore)
    data = verification.to_json()
    if as_json:
        _print(out, data, as_json=True)
    else:
        lines = [f"verdict: {data['verdict']} (active controller: {data['active_controller']})"]
        lines += [f"  - {reason}" for reason in data["reasons"]]
        if data["fault"]:
            fault = data["fault"]
            lines.append(
                f"fault {fault['fault']} on {fault['host']} to verdict: {data['fault_to_verdict_seconds']} s"
            )
        incidents = ", ".join(i["ops_item_id"] for i in data["incidents"]) or "none"
        snapshots = ", ".join(s["backup_id"] for s in data["snapshots"]) or "none"
        lines.append(f"incidents: {incidents}   snapshots: {snapshots}   executions: {data['executions']}")
        if data["restore_mode"] != "off":
            lines.append(f"restore ({data['restore_mode']}):")
            for action in data["restore_actions"]:
                done = "restored" if action.get("restored") else "NOT restored"
                lines.append(f"  {action.get('controller')}: {action.get('kind')}: {done}")
            if not data["restore_actions"]:
                lines.append("  nothing started")
        print("\n".join(lines), file=out)
        out.flush()
    return 0 if data["verdict"] in ("HEALTHY", "FAILED_OVER") else 1


def _chaos(out: Any, lab: Any, args: argparse.Namespace) -> int:
    from hyperpod_ha_dev.simulation.lab.chaos import run_chaos
    from hyperpod_ha_dev.simulation.lab.chaos_plan import plan_chaos
    from hyperpod_ha_dev.simulation.lab.chaos_report import chaos_table
    from hyperpod_ha_dev.simulation.lab.verify import LabNotUp

    # The plan first (a bad --minutes is refused before the lab is looked at), then the lab.
    hosts = lab.topology
    plan = plan_chaos(
        args.seed,
        args.minutes,
        [h.name for h in hosts.controller_hosts],
        [h.name for h in hosts.compute_hosts],
    )
    if not lab.is_up():
        raise LabNotUp("the lab is not up (hyperpod-ha lab up)")
    tell = None if args.json else lambda line: print(f"  {line}", file=out, flush=True)
    if tell is not None:
        tell(f"{len(plan.faults)} fault(s) planned over {args.minutes:g} min (seed {args.seed})")
    result = run_chaos(lab, project_root(), plan, args.restore, tell)
    print(json.dumps(result.to_json(), indent=2) if args.json else chaos_table(result), file=out)
    out.flush()
    return 0 if result.passed else 1


def _printed(out: Any) -> Any:
    """Each timeline entry printed (and flushed) as the run makes it."""
    from hyperpod_ha_dev.simulation.timeline import TimelineEntry

    def follow(entry: TimelineEntry) -> None:
        detail = f"  {entry.detail}" if entry.detail else ""
        print(f"  {entry.seconds:7.2f}s  {entry.what}{detail}", file=out, flush=True)

    return follow


def _print(out: Any, data: Any, *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(data, indent=2), file=out)
    else:
        print(_status_text(data), file=out)
    out.flush()


def _daemon_state(daemon: dict[str, Any]) -> str:
    if daemon["stopped"]:
        return "stopped"
    return f"pid {daemon['pid']}" if daemon["pid"] else "not running"


def _status_text(status: dict[str, Any]) -> str:
    topology = status.get("topology", {})
    lines = [
        f"lab {'up' if status.get('up') else 'not up'}: Slurm {topology.get('slurm')}, "
        f"{topology.get('controllers')} controllers, {topology.get('nodes')} nodes, "
        f"under {status.get('root')}"
    ]
    for name, host in status.get("hosts", {}).items():
        daemons = ", ".join(f"{daemon} {_daemon_state(d)}" for daemon, d in host["daemons"].items())
        cut = " (cut off the network)" if host.get("isolated") else ""
        lines.append(f"  {name:6} {host['address']:15} {daemons}{cut}")
    beat = status.get("heartbeat")
    if beat:
        lines.append(f"  heartbeat: written by controller #{beat['writer_index']} at {beat['beat_time']}")
    for key, what in (
        ("state_read_only_hosts", "read-only"),
        ("heartbeat_hidden_hosts", "heartbeat unreadable"),
    ):
        if status.get(key):
            lines.append(f"  StateSaveLocation {what} on {', '.join(status[key])}")
    if status.get("local_slurm_conf_hosts"):
        hosts = ", ".join(status["local_slurm_conf_hosts"])
        lines.append(f"  slurm.conf a local copy (not the shared one) on {hosts}")
    return "\n".join(lines)
