"""The sessions played to AWS's client (recorded) and to ours (compared with the recordings).

``tests/fakes/record_plugin.py`` runs ``aws/session-manager-plugin`` against the fake
agent for each scenario and writes ``tests/fixtures/session_manager/<name>.jsonl``;
``tests/unit/commands/test_plugin_fixtures.py`` runs the project's client against the
same scripts and compares.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.fakes.ssm_agent import (
    AgentScript,
    ChannelClosed,
    Drop,
    Garbage,
    Hang,
    Pause,
    Reordered,
    ResendAcked,
    Step,
    exit_code,
    stderr,
    stdout,
)

SESSION_ID = "hyperpod-ha-probe-0a1b2c3d4e5f67890"
TOKEN = "AAEAAZrecordedSessionToken0123456789"
RESUME_TOKEN = "AAEAAZresumedSessionToken0123456789"
TARGET = "sagemaker-cluster:abcd1234efgh_controller-machine-i-0123456789abcdef0"
PROBE_OUTPUT = (
    b"Slurmctld(primary) at ip-10-1-0-1 is UP\nSlurmctld(backup) at ip-10-1-0-2 is UP\n"
    b'{"hyperpod_ha_probe": 1, "rc": 0}\n'
)
SERVICE_REASON = "Your session timed out due to inactivity and has been terminated."
# The handshake is followed by a pause: the plugin takes a moment to start its session
# handler and leaves output arriving before that unacknowledged (the agent resends it).
SETTLE = Pause(0.3)


@dataclass(frozen=True)
class Scenario:
    name: str
    what: str
    steps: tuple[Step, ...]
    options: tuple[tuple[str, Any], ...] = ()
    deterministic: bool = True  # the client's frames do not depend on timing: compare bytes
    plugin_seconds: float = 20.0  # the recording gives the plugin this long to finish

    def script(self) -> AgentScript:
        return AgentScript(session_id=SESSION_ID, token=TOKEN, steps=self.steps, **dict(self.options))


def _scenarios() -> dict[str, Scenario]:
    many = bytes(range(32, 127)) * 60  # 5700 bytes: 6 frames, the last three out of order
    listed = [
        Scenario(
            "probe", "the probe's command, merged output", (SETTLE, stdout(PROBE_OUTPUT), ChannelClosed())
        ),
        Scenario(
            "stderr-exit",
            "stdout, stderr and a non-zero exit code (separate streams)",
            (
                SETTLE,
                stdout(b"partial\n"),
                stderr(b"scontrol: error: Unable to contact slurm controller\n"),
                exit_code(3),
                ChannelClosed(),
            ),
        ),
        Scenario(
            "many-frames",
            "output of many frames, some ahead of a gap",
            (
                SETTLE,
                stdout(many[:3072]),
                Reordered((stdout(many[3072:]),), order=(2, 0, 1)),
                ChannelClosed(),
            ),
        ),
        Scenario(
            "agent-resends",
            "the agent resends an acknowledged frame and a frame whose first copy was corrupt",
            (
                SETTLE,
                stdout(b"once\n"),
                ResendAcked(2),
                stdout(b"twice\n", corrupt_first_send=True),
                ChannelClosed(),
            ),
            deterministic=False,
        ),
        Scenario(
            "lost-frame",
            "the first copy of the client's HandshakeResponse is lost",
            (SETTLE, stdout(b"after a resend\n"), ChannelClosed()),
            (("lose_input", frozenset({0})),),
            deterministic=False,
        ),
        Scenario(
            "late-handshake",
            "the agent opens its side 1.5 s late",
            (SETTLE, stdout(b"late\n"), ChannelClosed()),
            (("handshake_delay", 1.5),),
        ),
        Scenario(
            "text-frame",
            "a text frame and an undecodable frame amid the output",
            (
                SETTLE,
                stdout(b"one "),
                Garbage('{"not": "a frame"}'),
                Garbage(b"\x00\x00\x00\x74short"),
                stdout(b"two"),
                ChannelClosed(),
            ),
        ),
        Scenario(
            "service-ends",
            "the service ends the session with its reason before the command's end",
            (SETTLE, stdout(b"first part of the output\n"), ChannelClosed(output=SERVICE_REASON)),
        ),
        Scenario(
            "resume",
            "the connection drops; the client resumes the session and reconnects",
            (SETTLE, stdout(b"before\n"), Pause(0.2), Drop(resume=True), stdout(b"after\n"), ChannelClosed()),
            (("resume_token", RESUME_TOKEN),),
            deterministic=False,
        ),
        Scenario(
            "unknown-action",
            "the agent asks for a client action nobody knows",
            (Hang(),),
            (("extra_actions", ({"ActionType": "Telepathy", "ActionParameters": {}},)),),
        ),
        Scenario(
            "client-terminates",
            "the agent never acknowledges the client's input; the client gives the session up",
            (Hang(),),
            (("ack_input", False), ("handshake_response_timeout", 400.0), ("patience", 400.0)),
            deterministic=False,
            plugin_seconds=360.0,
        ),
    ]
    return {scenario.name: scenario for scenario in listed}


SCENARIOS: dict[str, Scenario] = _scenarios()
