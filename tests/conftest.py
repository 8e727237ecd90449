"""Fixtures shared by every tier: the project root, the embedded stack, loading a handler."""

from __future__ import annotations

import os
import pwd
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

from tests.iam import recording

# No deadline per example: a deadline is a timing assertion, and on a loaded machine (the suite
# runs beside Slurm's builds and the labs) it failed examples that are right.
settings.register_profile("hyperpod-ha", deadline=None)
settings.load_profile("hyperpod-ha")

if TYPE_CHECKING:
    from hyperpod_ha.commands import RunnerFactory

ROOT = Path(__file__).resolve().parent.parent
# Owner of the files fake controllers write: tests never assume a `slurm` user on the host.
CURRENT_USER = pwd.getpwuid(os.getuid()).pw_name
EVENTS = ROOT / "events"

# Tests never reach a real AWS account, whatever the developer's shell says; nor read the
# developer's own hyperpod-ha configuration (~/.config/hyperpod-ha) or HYPERPOD_HA_* settings.
for _name in (
    "AWS_PROFILE",
    "AWS_ENDPOINT_URL",
    "HYPERPOD_HA_STACK_NAME",
    "HYPERPOD_HA_REGION",
    "HYPERPOD_HA_PROFILE",
    "XDG_CONFIG_HOME",
):
    os.environ.pop(_name, None)
os.environ["HYPERPOD_HA_CONFIG"] = str(ROOT / ".no-user-config" / "samconfig.toml")
os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "POWERTOOLS_METRICS_NAMESPACE": "HyperPodHA",
        "POWERTOOLS_SERVICE_NAME": "hyperpod-ha",
    }
)


# Every AWS call a function of the embedded stack makes is recorded, then evaluated by IAM against
# its role (tests/iam): from the first client on.
recording.install()


@pytest.fixture
def root() -> Path:
    return ROOT


# The ``use_transport`` fixture: ``use_transport(name, factory)``.
UseTransport = Callable[[str, "RunnerFactory"], None]


@pytest.fixture
def use_transport(monkeypatch: pytest.MonkeyPatch) -> UseTransport:
    """Registers a command transport by name for this test only: the registry is process-wide,
    so a transport left behind would be found by every later test."""
    from hyperpod_ha import commands

    def register(name: str, factory: RunnerFactory) -> None:
        monkeypatch.setitem(commands._transports, name, factory)  # undone after the test
        commands.register_transport(name, factory)  # as runtime code registers one

    return register


def load_function_module(name: str, *, fresh: bool = False) -> ModuleType:
    """Import ``functions/<name>/app.py`` as its own module, as the embedded stack does.

    ``fresh``: a new container, so no client or setting cached by an earlier test is reused.
    """
    from hyperpod_ha_dev.embedded.functions import FunctionSpec, load_handler, new_containers

    if fresh:
        new_containers()

    spec = FunctionSpec(
        logical_id=name,
        name=name,
        arn=f"arn:aws:lambda:us-east-1:123456789012:function:{name}",
        code_dir=ROOT / "functions" / name,
        handler="app.lambda_handler",
        environment={},
        timeout=60,
        memory=256,
    )
    handler = load_handler(spec)
    import sys

    return sys.modules[handler.__module__]


def subscribed_inbox(topic_arn: str, name: str = "inbox") -> str:
    """An SQS queue subscribed to ``topic_arn`` (inside a moto mock): what people would receive."""
    import boto3

    sqs = boto3.client("sqs")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    boto3.client("sns").subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=arn)
    return str(url)


class Embedded:
    """The embedded stack with its site (cluster, failover topic, secret, file system)."""

    def __init__(self, site: Any, stack: Any) -> None:
        self.site = site
        self.stack = stack

    @property
    def state_machine_arn(self) -> str:
        return str(self.stack.outputs["FailoverVerificationStateMachineArn"])

    def executions(self) -> list[dict[str, Any]]:
        return self.stack.executions()  # type: ignore[no-any-return]


# The first check runs at once by default; no wait between checks, two checks at most.
FAST_RUNS = {"BackoffSeconds": 0, "MaxAttempts": 2}
# Runs held before their first check, for tests about what happens while a run is active:
# SettleSeconds is 0 by default but stays a parameter, so a test can still hold a run.
# Longer than any test's storm takes on a loaded machine (10,000 invocations took over 600 s
# there, the run ended, and the next controller event rightly started a second one), shorter than
# the lease (3600 s), which would otherwise expire first.
HELD_RUNS = {"SettleSeconds": 3000}


def _embedded(parameters: dict[str, Any]) -> Iterator[Embedded]:
    from hyperpod_ha_dev.embedded.site import create_site, embedded_aws
    from hyperpod_ha_dev.embedded.stack import create_stack
    from tests.iam.evaluation import evaluate

    with embedded_aws():
        site = create_site()
        site.extra_parameters.update(parameters)
        recording.take()
        embedded = Embedded(site, create_stack(ROOT, site.stack_parameters()))
        yield embedded
        embedded.stack.stop_running_executions()
        problems = evaluate(recording.take(), embedded.stack)
        assert problems == [], "IAM would refuse these calls of the functions (tests/iam):\n" + "\n".join(
            problems
        )


@pytest.fixture
def embedded() -> Iterator[Embedded]:
    yield from _embedded(FAST_RUNS)


@pytest.fixture
def embedded_held() -> Iterator[Embedded]:
    """Runs wait in their settle state: the lease stays held for the whole test."""
    yield from _embedded(HELD_RUNS)


def published(topic_arn: str) -> list[Any]:
    """Every message published to ``topic_arn`` (inside a moto mock), as TopicMessages, oldest
    first: moto keeps what was sent in its backend, whoever subscribed."""
    from moto.sns.models import sns_backends

    from hyperpod_ha.topic_messages import TopicMessage

    _, _, _, region, account, _ = topic_arn.split(":")
    topic = sns_backends[account][region].topics[topic_arn]
    return [
        TopicMessage(
            subject or "",
            message,
            {
                name: value.get("Value", value.get("StringValue"))
                for name, value in (attributes or {}).items()
            },
        )
        for _, message, subject, attributes, _ in topic.sent_notifications
    ]
