"""Controller nodes on this machine for roll-out tests: a command runner that really runs the
rotation document's command (the node script, decoded from the document) against a
temporary slurmdbd.conf per controller, with fake ``systemctl`` and ``sacctmgr``.

- ``systemctl restart slurmdbd`` snapshots the credentials in the controller's
  slurmdbd.conf: they are what "slurmdbd" runs with until the next restart (as the
  captures show: no reload without a restart).
- ``sacctmgr show cluster`` succeeds when the database accepts the running credentials.
  The test decides that with ``accepts(user, password)`` (a set of known credentials, or a
  real MariaDB login); the runner evaluates it for the candidate credentials before each
  run, since the fakes live in another process.
- Every controller's slurmdbd.conf is at the default path on its own disk: here the
  runner maps that path to the controller's directory.
- It belongs to SlurmUser, ``slurm`` on every controller; this machine may have no such user,
  so the test's own user stands in: the node is told to give the file to the test's user
  where the command says ``slurm``, and a test passing its own user as the owner has the
  document's pattern checked with ``slurm`` in its place.
- The node fetches the secret as on a controller, with ``aws secretsmanager get-secret-value``:
  the lab's stand-in CLI first on its PATH (``hyperpod_ha_dev.simulation.node_aws_cli``)
  answers for the request's ``secretId`` with ``secret_source()`` (i.e. AWSCURRENT), from a 0600
  file that exists only while the request runs.
- Every fake binary records its argv, so tests can check that no password was ever on a
  command line.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hyperpod_ha.commands import (
    AccessDenied,
    CommandRequest,
    CommandResult,
    CommandTimedOut,
    TargetUnreachable,
)
from hyperpod_ha.rotation.rollout_document import (
    DEFAULT_CONF_PATH,
    GENERIC_DOCUMENT,
    OWNER_PATTERN,
    render_node_command,
)
from hyperpod_ha_dev.simulation import node_aws_cli

DOCUMENT = "HyperPodHA-SlurmdbdCredentials"
SECRET_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:hyperpod-slurmdbd-AbCdEf"
ME = pwd.getpwuid(os.getuid()).pw_name
SLURM_USER = "slurm"

CONF_TEMPLATE = """\
# slurmdbd.conf written by the lifecycle scripts
ArchiveEvents=yes
AuthType=auth/munge
DbdHost=localhost  #YOUR_MASTER_IP_ADDRESS_OR_NAME
DbdPort=6819
SlurmUser=slurm
LogFile=/var/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageUser={user}
StoragePass={password}
StorageHost=db.example.internal # Endpoint from RDS console
StoragePort=3306
"""

_CREDENTIAL_LINE = re.compile(r"^\s*(StorageUser|StoragePass)\s*=\s*(\S*)", re.IGNORECASE | re.MULTILINE)

FAKE_SYSTEMCTL = """\
import json, os, re, sys
from pathlib import Path
node = Path(os.environ["FAKE_NODE_DIR"])
with open(node / "calls.log", "a") as log:
    log.write(json.dumps(["systemctl", *sys.argv[1:]]) + "\\n")
if sys.argv[1:3] != ["restart", "slurmdbd"]:
    sys.exit(2)
if (node / "fail_restart_once").exists():
    (node / "fail_restart_once").unlink()
    sys.stderr.write("Job for slurmdbd.service failed because a timeout was exceeded.\\n")
    sys.exit(1)
if (node / "fail_restart").exists():
    sys.stderr.write("Job for slurmdbd.service failed because the control process exited with error code.\\n")
    sys.exit(1)
conf = (node / "etc" / "slurmdbd.conf").read_text()
pattern = re.compile(r"^\\s*(StorageUser|StoragePass)\\s*=\\s*(\\S*)", re.IGNORECASE | re.MULTILINE)
creds = dict((m.group(1).lower(), m.group(2)) for m in pattern.finditer(conf))
(node / "running.json").write_text(json.dumps(creds))
with open(node / "restarts.log", "a") as log:
    log.write(creds.get("storageuser", "") + "\\n")
"""

FAKE_SACCTMGR = """\
import json, os, sys
from pathlib import Path
node = Path(os.environ["FAKE_NODE_DIR"])
with open(node / "calls.log", "a") as log:
    log.write(json.dumps(["sacctmgr", *sys.argv[1:]]) + "\\n")
running = json.loads((node / "running.json").read_text()) if (node / "running.json").exists() else {}
accepted = json.loads((node / "accepted.json").read_text())
if [running.get("storageuser"), running.get("storagepass")] in accepted:
    print("lab")
    sys.exit(0)
sys.stderr.write(
    "sacctmgr: error: slurm_persist_conn_open_without_init: failed to open persistent "
    "connection to host:localhost:6819: Connection refused\\n"
)
sys.exit(1)
"""


def credentials_in(conf_text: str) -> dict[str, str]:
    return {m.group(1).lower(): m.group(2) for m in _CREDENTIAL_LINE.finditer(conf_text)}


@dataclass
class RolloutNode:
    """One controller: its directory stands for its disk."""

    name: str
    directory: Path
    unreachable: bool = False

    @property
    def conf(self) -> Path:
        return self.directory / "etc" / "slurmdbd.conf"

    def credentials(self) -> dict[str, str]:
        return credentials_in(self.conf.read_text())

    def running(self) -> dict[str, str]:
        path = self.directory / "running.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def restarts(self) -> list[str]:
        path = self.directory / "restarts.log"
        return path.read_text().splitlines() if path.exists() else []

    def calls(self) -> list[list[str]]:
        path = self.directory / "calls.log"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def fail_restarts(self, *, once: bool = False) -> None:
        (self.directory / ("fail_restart_once" if once else "fail_restart")).touch()

    def as_json(self) -> dict[str, str | None]:
        """The controller as discovery describes it."""
        return {
            "instance_id": f"i-{self.name}",
            "group": "controller-machine",
            "status": "Running",
            "private_ip": None,
            "hostname": self.name,
            "target": f"sagemaker-cluster:abc123_controller-machine-i-{self.name}",
        }


@dataclass
class RolloutRunner:
    """A :class:`~hyperpod_ha.commands.CommandRunner` over :class:`RolloutNode` s."""

    base: Path
    secret_source: Callable[[], str]
    accepts: Callable[[str, str], bool]
    python: str = sys.executable
    document: str = DOCUMENT
    transport: str = "fake-node"
    controllers: dict[str, RolloutNode] = field(default_factory=dict)
    requests: list[CommandRequest] = field(default_factory=list)
    argv_seen: list[list[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        bin_dir = self.base / "bin"
        bin_dir.mkdir(parents=True, exist_ok=True)
        for name, source in (("systemctl", FAKE_SYSTEMCTL), ("sacctmgr", FAKE_SACCTMGR)):
            path = bin_dir / name
            path.write_text(f"#!{sys.executable}\n{source}")
            path.chmod(0o755)
        python3 = bin_dir / "python3"
        if python3.exists() or python3.is_symlink():
            python3.unlink()
        python3.symlink_to(self.python)
        node_aws_cli.install(self.base / "aws-cli", sys.executable)

    def add(self, name: str, user: str, password: str) -> RolloutNode:
        """A controller whose slurmdbd runs with these credentials."""
        directory = self.base / name
        (directory / "etc").mkdir(parents=True)
        controller = RolloutNode(name, directory)
        controller.conf.write_text(CONF_TEMPLATE.format(user=user, password=password))
        controller.conf.chmod(0o600)
        (directory / "running.json").write_text(json.dumps({"storageuser": user, "storagepass": password}))
        self.controllers[controller.as_json()["target"] or ""] = controller
        return controller

    def run(self, request: CommandRequest) -> CommandResult:
        self.requests.append(request)
        controller = self.controllers.get(request.target)
        if controller is None or controller.unreachable:
            raise TargetUnreachable(f"TargetNotConnected: {request.target} is not connected")
        if request.document == GENERIC_DOCUMENT:
            command = request.parameters["command"][0]
        elif request.document == self.document:
            parameters = dict(request.parameters)
            if parameters.get("owner") == [ME] and not re.fullmatch(OWNER_PATTERN, ME):
                parameters["owner"] = [SLURM_USER]
            command = render_node_command(parameters)
        else:
            # IAM allows StartSession with this document only.
            raise AccessDenied(f"not authorized to perform ssm:StartSession with document {request.document}")
        # Every controller has slurmdbd.conf at the same path on its own disk; here each one's
        # disk is its directory, and the test's user stands in for SlurmUser.
        command = command.replace(f" {DEFAULT_CONF_PATH} {SLURM_USER} ", f" {controller.conf} {ME} ")
        command = command.replace(DEFAULT_CONF_PATH, str(controller.conf))
        secret_text = self._prepare(controller)
        argv = shlex.split(command)
        self.argv_seen.append(argv)
        cli = self.base / "aws-cli"
        environment = {
            "PATH": os.pathsep.join([str(cli), str(self.base / "bin"), os.environ.get("PATH", "/bin")]),
            "FAKE_NODE_DIR": str(controller.directory),
        }
        node_aws_cli.serve(cli, _secret_id(command), secret_text)
        started = time.monotonic()
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                env=environment,
                timeout=request.deadline_seconds,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise CommandTimedOut(
                f"command on {request.target} exceeded {request.deadline_seconds} s"
            ) from None
        finally:
            node_aws_cli.withdraw(cli)
        return CommandResult(
            done.stdout, done.stderr, done.returncode, time.monotonic() - started, self.transport
        )

    def _prepare(self, controller: RolloutNode) -> str:
        """The secret the node reads (AWSCURRENT), and which credentials the database takes."""
        secret_text = self.secret_source()
        secret = json.loads(secret_text)
        candidates = [(secret["username"], secret["password"])]
        on_node = controller.credentials()
        candidates.append((on_node.get("storageuser", ""), on_node.get("storagepass", "")))
        accepted = [list(c) for c in candidates if self.accepts(*c)]
        (controller.directory / "accepted.json").write_text(json.dumps(accepted))
        return secret_text


def _secret_id(command: str) -> str:
    """The ``secretId`` the node command passes its script (``... | python3 - <secretId> ...``)."""
    inner = shlex.split(command)[-1]
    return inner.split("python3 - ", 1)[1].split()[0]
