"""``python -m hyperpod_lab prepare|up|down|status``: the lab from a shell (as root).

The database password for ``up`` comes from ``HYPERPOD_LAB_DB_PASSWORD`` when set (never
from the command line, where every user could read it), else a random one. Slurm 25.11 is
built from a source tarball: ``--slurm-source`` (else ``HYPERPOD_LAB_SLURM_SOURCE``, else
``../shared/slurm/slurm-25.11.7.tar.gz``), checked by ``--sha256`` or the SHA256SUMS beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from hyperpod_ha.observability import logger
from hyperpod_lab.lab import Lab
from hyperpod_lab.packages import PackageInstallError, ensure_packages
from hyperpod_lab.processes import LabError
from hyperpod_lab.releases import SlurmRelease, SlurmSourceError, release
from hyperpod_lab.slurm_source import ensure_built
from hyperpod_lab.slurm_tarball import DEFAULT_TARBALL, SOURCE_ENV
from hyperpod_lab.topology import DEFAULT_SLURM, SLOT_ENV, LabConfigError, Topology

PASSWORD_ENV = "HYPERPOD_LAB_DB_PASSWORD"  # noqa: S105 (a variable name, not a password)


def prepare(
    chosen: SlurmRelease, source: Path | None = None, sha256: str | None = None, *, build_it: bool = True
) -> dict[str, object]:
    """What a machine needs before the lab of ``chosen`` can come up: its packages, its build
    (``build_it`` False: the packages only)."""
    started = time.monotonic()
    installed = ensure_packages(chosen.packages)
    installed_at = time.monotonic()
    build = ensure_built(chosen.series, source=source, sha256=sha256) if chosen.built and build_it else None
    return {
        "slurm": chosen.series,
        "installed_packages": installed,
        "packages_seconds": round(installed_at - started, 1),
        "prefix": str(build.prefix) if build else None,
        "built_now": build.built_now if build else False,
        "build_seconds": round(time.monotonic() - installed_at, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hyperpod_lab", description=__doc__)
    parser.add_argument(
        "--root", type=Path, help=f"the lab's directory (default: /srv/hplab, or its slot's: ${SLOT_ENV})"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="bring the lab up (idempotent)")
    up.add_argument("--controllers", type=int, default=2, help="2 or 3")
    up.add_argument("--nodes", type=int, default=2, help="1 or 2")
    up.add_argument(
        "--slurm", default=DEFAULT_SLURM, help="24.11 or 25.11 (built here once) or 22.05 (Debian's)"
    )
    up.add_argument(
        "--network", default="", help="a private /24 for the lab's bridge (default: 10.214.<slot>.0/24)"
    )
    up.add_argument("--no-install", action="store_true", help="do not apt-get install missing packages")
    preparing = commands.add_parser(
        "prepare", help="install the packages of a Slurm release's lab and build it if needed (reused)"
    )
    preparing.add_argument("--slurm", default=DEFAULT_SLURM, help="24.11, 25.11 or 22.05")
    preparing.add_argument("--packages-only", action="store_true", help="install the packages; build nothing")
    for command in (up, preparing):
        command.add_argument(
            "--slurm-source",
            type=Path,
            help=f"25.11's source tarball (default: ${SOURCE_ENV}, else {DEFAULT_TARBALL})",
        )
        command.add_argument(
            "--sha256", help="the tarball's sha256 (default: its line in SHA256SUMS beside it)"
        )
    commands.add_parser("down", help="stop and remove everything of the lab (idempotent)")
    commands.add_parser("status", help="print the lab's state as JSON")
    args = parser.parse_args(argv)

    # Logs go to stderr so stdout stays one JSON document.
    logger.registered_handler.setStream(sys.stderr)  # type: ignore[attr-defined]
    try:
        if args.command == "up":
            topology = Topology(args.controllers, args.nodes, args.network, args.root or Path(), args.slurm)
            lab = Lab(topology)
            report = lab.up(
                os.environ.get(PASSWORD_ENV) or None,
                install_packages=not args.no_install,
                slurm_source=args.slurm_source,
                sha256=args.sha256,
            )
            result: object = {
                "seconds": round(report.seconds, 2),
                "reused": report.reused,
                "built_slurm": report.built_slurm,
                **lab.status(),
            }
        elif args.command == "prepare":
            result = prepare(
                release(args.slurm), args.slurm_source, args.sha256, build_it=not args.packages_only
            )
        elif args.command == "down":
            lab = Lab(root=args.root)
            result = {"removed": lab.down(), "leftovers": lab.leftovers()}
        else:
            result = Lab(root=args.root).status()
    except (LabError, LabConfigError, PackageInstallError, SlurmSourceError) as exc:
        print(f"hyperpod_lab {args.command}: {exc.reason}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
