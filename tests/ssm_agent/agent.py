"""AWS's Session Manager agent, run for the tests: its binaries found and checked, configured
against the service stand-in, started and stopped.

The binaries come from ``../shared/ssm-agent/amazon-ssm-agent-bin.tar.xz`` (checked against
its ``SHA256SUMS``), or from ``HYPERPOD_HA_SSM_AGENT_DIR``, a folder holding the four binaries
built from AWS's source (docs/development.md says how). The agent runs as root with its
configuration beside its binaries (no registration, no instance metadata: a custom identity and
credentials in its environment), inside the tier's sandbox (``sandbox.sh``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tarfile
import time
from pathlib import Path
from types import TracebackType

from tests.conftest import ROOT
from tests.fakes.ssm_service import SessionService

SHARED = ROOT.parent / "shared" / "ssm-agent"
ARCHIVE = "amazon-ssm-agent-bin.tar.xz"
BINARIES = ("amazon-ssm-agent", "ssm-agent-worker", "ssm-session-worker", "ssm-document-worker")
INSTANCE_ID = "mi-0123456789abcdef0"
REGION = "eu-west-1"
# The agent's own start (registration retries, workers) took about 9 s here; allow for a loaded machine.
START_SECONDS = 90


class AgentUnavailable(Exception):
    """Why AWS's agent cannot run here (the tier skips with it)."""


def _sums(folder: Path) -> dict[str, str]:
    sums = {}
    for line in (folder / "SHA256SUMS").read_text().splitlines():
        digest, _, name = line.strip().partition("  ")
        if digest and name:
            sums[name] = digest
    return sums


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def agent_binaries(into: Path) -> Path:
    """A folder with the four binaries, checked; :class:`AgentUnavailable` says why not."""
    built = os.environ.get("HYPERPOD_HA_SSM_AGENT_DIR")
    if built:
        source = Path(built)
        missing = [name for name in BINARIES if not (source / name).is_file()]
        if missing:
            raise AgentUnavailable(f"HYPERPOD_HA_SSM_AGENT_DIR={built} lacks {', '.join(missing)}")
        for name in BINARIES:
            shutil.copy2(source / name, into / name)
        return into
    if not (SHARED / ARCHIVE).is_file():
        raise AgentUnavailable(
            f"AWS's agent is not here ({SHARED / ARCHIVE} is absent): build it from aws/amazon-ssm-agent's "
            "source and set HYPERPOD_HA_SSM_AGENT_DIR (docs/development.md)"
        )
    sums = _sums(SHARED)
    if _sha256(SHARED / ARCHIVE) != sums.get(ARCHIVE):
        raise AgentUnavailable(f"{SHARED / ARCHIVE} does not match its SHA256SUMS")
    with tarfile.open(SHARED / ARCHIVE) as archive:
        for member in archive.getmembers():
            name = Path(member.name).name
            if member.isfile() and name in BINARIES:
                extracted = archive.extractfile(member)
                assert extracted is not None
                (into / name).write_bytes(extracted.read())
    for name in BINARIES:
        path = into / name
        if not path.is_file() or _sha256(path) != sums.get(name):
            raise AgentUnavailable(f"{name} from {ARCHIVE} is missing or does not match SHA256SUMS")
        path.chmod(0o755)
    return into


def sandboxed() -> str | None:
    """None inside the tier's sandbox (root, loopback only); else why the tier cannot run."""
    if os.geteuid() != 0:
        return "AWS's agent runs as root: run the tier as root (sudo make test-ssm-agent)"
    if os.environ.get("SSM_AGENT_SANDBOX") != "1" or sorted(os.listdir("/sys/class/net")) != ["lo"]:
        return "AWS's agent runs only inside tests/ssm_agent/sandbox.sh (loopback only): make test-ssm-agent"
    return None


class RealAgent:
    """AWS's agent against ``service``; a context manager. ``log`` is what it printed."""

    def __init__(
        self, folder: Path, service: SessionService, *, require_challenge_response: bool = False
    ) -> None:
        self.folder = folder
        self.service = service
        self.log = folder / "agent.log"
        self._process: subprocess.Popen[bytes] | None = None
        configuration = {
            "Profile": {"ShareCreds": False},
            "Mds": {"Endpoint": service.endpoint, "CommandWorkersLimit": 1},
            "Ssm": {
                "Endpoint": service.endpoint,
                "HealthFrequencyMinutes": 60,
                "SessionLogsDestination": "none",
            },
            "Mgs": {"Region": REGION, "Endpoint": service.endpoint, "StopTimeoutMillis": 2000},
            "Agent": {"Region": REGION, "SelfUpdate": False, "TelemetryMetricsToSSM": False},
            "S3": {"Endpoint": service.endpoint, "Region": REGION},
            "Kms": {"Endpoint": service.endpoint, "RequireKMSChallengeResponse": require_challenge_response},
            "Identity": {
                "ConsumptionOrder": ["CustomIdentity"],
                "CustomIdentities": [
                    {"InstanceID": INSTANCE_ID, "Region": REGION, "CredentialsProvider": "DEFAULT"}
                ],
            },
        }
        (folder / "configuration").mkdir(exist_ok=True)
        (folder / "configuration" / "amazon-ssm-agent.json").write_text(json.dumps(configuration, indent=2))

    def __enter__(self) -> RealAgent:
        environment = {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": "/root",
            "SSL_CERT_FILE": str(self.service.certificate),
            "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
            "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AWS_REGION": REGION,
        }
        self.service.agent_connected.clear()
        with self.log.open("ab") as log:
            self._process = subprocess.Popen(
                [str(self.folder / "amazon-ssm-agent")],
                cwd=self.folder,
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        if not self.service.agent_connected.wait(START_SECONDS):
            self.__exit__(None, None, None)
            tail = self.log.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"AWS's agent opened no control channel within {START_SECONDS} s:\n{tail}")
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._process.pid, signal.SIGTERM)
        try:
            self._process.wait(15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait(5)
        deadline = time.monotonic() + 5
        while self.service.agents and time.monotonic() < deadline:
            time.sleep(0.05)
