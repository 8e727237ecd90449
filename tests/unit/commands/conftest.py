from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import boto3
import pytest
from botocore.stub import Stubber
from hypothesis import settings

from tests.fakes.ssm_agent import FakeSsmAgent

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient

# Under qemu-user (tests/arm64) Python runs some twenty times slower: fewer examples, no deadline.
settings.register_profile("emulated", max_examples=10, deadline=None)


@pytest.fixture
def ssm() -> SSMClient:
    # A real client: Stubber checks every call against the SSM API model.
    return boto3.client(
        "ssm", region_name="eu-west-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    )


@pytest.fixture
def stubber(ssm: SSMClient) -> Iterator[Stubber]:
    with Stubber(ssm) as stub:
        yield stub
        stub.assert_no_pending_responses()


@pytest.fixture
def ssm_calls(ssm: SSMClient) -> list[str]:
    """Names of the SSM operations the code under test called, in order."""
    calls: list[str] = []

    def record(model: object, **_: object) -> None:
        calls.append(str(getattr(model, "name", "")))

    ssm.meta.events.register("before-parameter-build.ssm", record)
    return calls


@pytest.fixture
def fake_agent(request: pytest.FixtureRequest) -> Iterator[FakeSsmAgent]:
    with FakeSsmAgent(request.param) as agent:
        yield agent
