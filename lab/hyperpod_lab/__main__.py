"""``python -m hyperpod_lab up|down|status``: the lab from a shell (as root).

The database password for ``up`` comes from ``HYPERPOD_LAB_DB_PASSWORD`` when set (never
from the command line, where every user could read it), else a random one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from hyperpod_ha.observability import logger
from hyperpod_lab.lab import Lab
from hyperpod_lab.processes import LabError
from hyperpod_lab.topology import DEFAULT_NETWORK, DEFAULT_ROOT, LabConfigError, Topology

PASSWORD_ENV = "HYPERPOD_LAB_DB_PASSWORD"  # noqa: S105 (a variable name, not a password)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hyperpod_lab", description=__doc__)
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="the lab's directory")
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="bring the lab up (idempotent)")
    up.add_argument("--controllers", type=int, default=2, help="2 or 3")
    up.add_argument("--nodes", type=int, default=2, help="1 or 2")
    up.add_argument("--network", default=DEFAULT_NETWORK, help="a private /24 for the lab's bridge")
    up.add_argument("--no-install", action="store_true", help="do not apt-get install missing packages")
    commands.add_parser("down", help="stop and remove everything of the lab (idempotent)")
    commands.add_parser("status", help="print the lab's state as JSON")
    args = parser.parse_args(argv)

    # Logs go to stderr so stdout stays one JSON document.
    logger.registered_handler.setStream(sys.stderr)  # type: ignore[attr-defined]
    try:
        if args.command == "up":
            topology = Topology(args.controllers, args.nodes, args.network, args.root)
            lab = Lab(topology)
            report = lab.up(os.environ.get(PASSWORD_ENV) or None, install_packages=not args.no_install)
            result: object = {"seconds": round(report.seconds, 2), "reused": report.reused, **lab.status()}
        elif args.command == "down":
            lab = Lab(root=args.root)
            result = {"removed": lab.down(), "leftovers": lab.leftovers()}
        else:
            result = Lab(root=args.root).status()
    except (LabError, LabConfigError) as exc:
        print(f"hyperpod_lab {args.command}: {exc.reason}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
