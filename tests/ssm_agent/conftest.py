"""The tier that runs AWS's Session Manager agent (``make test-ssm-agent``; in ``make test`` as
root): one agent for the module, against the service stand-in, inside ``sandbox.sh``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
import pytest

from hyperpod_ha_dev.cfn import Context, Resolver
from hyperpod_ha_stack.template import load_template, with_fixed_values
from tests.conftest import ROOT
from tests.fakes.ssm_service import SessionService
from tests.ssm_agent.agent import REGION, AgentUnavailable, RealAgent, agent_binaries, sandboxed

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_ssm import SSMClient

pytestmark = pytest.mark.ssm_agent

DB_SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:111122223333:secret:slurmdbd-AbCdEf"
# The Slurm triggers' document pins its topic to the stack's SlurmFailoverTopicArn.
FAILOVER_TOPIC_ARN = "arn:aws:sns:eu-west-1:111122223333:slurm-failover"
# AWS's own default Session document (merged output, no exit code), as the service holds it.
MERGED_DOCUMENT = {
    "schemaVersion": "1.0",
    "description": "Instance Interactive Command Session",
    "sessionType": "NonInteractiveCommands",
    "parameters": {"command": {"type": "String", "description": "The command to run."}},
    "properties": {"linux": {"commands": "{{command}}", "runAsElevated": False}},
}
# The same with separate streams and an exit code, as the stack's documents are.
SEPARATE_DOCUMENT = {
    **MERGED_DOCUMENT,
    "properties": {"linux": {"commands": "{{command}}", "runAsElevated": True, "separateOutputStream": True}},
}


def stack_documents() -> dict[str, dict[str, Any]]:
    """template.yaml's Session documents by logical id, resolved as CloudFormation would."""
    template = load_template(ROOT / "template.yaml")

    def unresolvable(*names: str) -> Any:
        raise KeyError(f"the documents refer to {names}")

    resolver = Resolver(
        template,
        Context(
            parameters={"DbSecretArn": DB_SECRET_ARN, "SlurmFailoverTopicArn": FAILOVER_TOPIC_ARN},
            pseudo={},
            ref=unresolvable,
            get_att=unresolvable,
            conditions={},
        ),
    )
    return {
        logical_id: resolver.resolve(with_fixed_values(template, resource["Properties"]["Content"]))
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::SSM::Document" and resource["Properties"]["DocumentType"] == "Session"
    }


def documents() -> dict[str, dict[str, Any]]:
    return {**stack_documents(), "Merged": MERGED_DOCUMENT, "Separate": SEPARATE_DOCUMENT}


@pytest.fixture(scope="session")
def agent_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = sandboxed()
    if reason:
        pytest.skip(reason)
    try:
        return agent_binaries(tmp_path_factory.mktemp("ssm-agent"))
    except AgentUnavailable as unavailable:
        pytest.skip(str(unavailable))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, agent_folder: Path) -> Iterator[SessionService]:
    with SessionService(tmp_path_factory.mktemp("service"), documents()) as stand_in:
        yield stand_in


@pytest.fixture(scope="module")
def agent(agent_folder: Path, service: SessionService) -> Iterator[RealAgent]:
    with RealAgent(agent_folder, service) as running:
        yield running


@pytest.fixture(autouse=True)
def trusts_the_service(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """The client's websockets verify the stand-in's certificate (a default SSL context)."""
    if "service" in request.fixturenames:
        service: SessionService = request.getfixturevalue("service")
        monkeypatch.setenv("SSL_CERT_FILE", str(service.certificate))


def aws_client(service: SessionService, name: str) -> Any:
    return boto3.client(
        name,
        endpoint_url=service.endpoint,
        verify=str(service.certificate),
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


@pytest.fixture
def ssm(service: SessionService, agent: RealAgent) -> SSMClient:
    client: SSMClient = aws_client(service, "ssm")
    return client


@pytest.fixture
def kms(service: SessionService) -> KMSClient:
    client: KMSClient = aws_client(service, "kms")
    return client


@pytest.fixture
def session_key(service: SessionService) -> Iterator[str]:
    """Session Manager's preferences encrypt sessions with this key while the test runs."""
    service.session_key = service.kms.create_key()
    yield service.session_key
    service.session_key = None


def agent_log_errors(agent: RealAgent) -> list[str]:
    return [line for line in agent.log.read_text(errors="replace").splitlines() if " ERROR " in line]
