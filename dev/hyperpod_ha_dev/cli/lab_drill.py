"""``hyperpod-ha drill start --lab``: the drill on the embedded stack against the Slurm lab's real
controllers (root; :mod:`hyperpod_ha_dev.simulation.lab.drill_run`), its report as ``drill
start`` prints it, with the same exit codes."""

from __future__ import annotations

import argparse
import json

from hyperpod_ha_cli.drill import EXIT_CODES
from hyperpod_ha_cli.drill_text import render_drill_report
from hyperpod_ha_cli.errors import RUNTIME_ERROR, CommandError, UsageError
from hyperpod_ha_cli.output import result_stream
from hyperpod_ha_dev.cli import project_root


def run_lab_drill_command(args: argparse.Namespace) -> int:
    """The drill on the embedded stack against the lab; its report as ``drill start`` prints it."""
    from hyperpod_ha_cli.status import cluster_status
    from hyperpod_ha_dev.simulation.lab.drill_run import lab_as_asked, run_lab_drill
    from hyperpod_lab import LabConfigError, LabError

    request = {"to": args.to, "hand_back": args.hand_back, "dry_run": args.dry_run}
    try:
        lab = lab_as_asked(args.slurm, args.controllers)
        drill = run_lab_drill(lab, project_root(), request, cluster_status)
    except LabConfigError as error:
        raise UsageError(str(error)) from error
    except LabError as error:
        raise UsageError(f"the lab is not usable: {error.reason}") from error
    out = result_stream()
    if args.json:
        print(json.dumps(drill.to_json(), indent=2, default=str), file=out)
    else:
        print(f"Slurm {drill.slurm_version}, {drill.controllers} controllers", file=out)
        for entry in drill.timeline:
            print(f"  {entry.seconds:7.2f} s  {entry.what}  {entry.detail}".rstrip(), file=out)
    out.flush()
    if drill.report is None:
        raise CommandError(
            f"the drill execution ended {drill.status}: {drill.error}", result_printed=args.json
        )
    if not args.json:
        print("\n" + "\n".join(render_drill_report(drill.report)), file=out)
        out.flush()
    return EXIT_CODES.get(str(drill.report.get("outcome")), RUNTIME_ERROR)
