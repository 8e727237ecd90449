"""The roll-out Session document as the stack creates it (moto), read by the SSM agent stand-in
the lab and the simulation use: the lab's values pass, anything else is refused."""

from __future__ import annotations

import boto3
import pytest

from hyperpod_ha.commands import CommandRequest
from hyperpod_ha.rotation.rollout import RolloutSettings
from hyperpod_ha.rotation.rollout_document import DEFAULT_CONF_PATH
from hyperpod_ha_dev.simulation.agent import DocumentParametersRejected, agent_command_line
from hyperpod_ha_dev.simulation.lab import LAB_SLURMDBD_CONF
from tests.conftest import Embedded


def request(embedded: Embedded, **parameters: list[str]) -> CommandRequest:
    document = embedded.stack.ref("SlurmdbdRolloutDocument")
    return CommandRequest("ctl1", document, 10, parameters)


def test_the_labs_and_hyperpods_roll_outs_are_admitted(embedded: Embedded) -> None:
    ssm = boto3.client("ssm")
    secret = embedded.site.secret_arn
    for conf, owner in ((LAB_SLURMDBD_CONF, "root"), (DEFAULT_CONF_PATH, "slurm")):
        settings = RolloutSettings(
            secret, embedded.stack.ref("SlurmdbdRolloutDocument"), conf_path=conf, owner=owner
        )
        line = agent_command_line(request(embedded, **settings.document_parameters()), ssm)
        assert line.endswith(f' {secret} {conf} {owner} 45"')


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("secretId", "arn:aws:secretsmanager:us-east-1:123456789012:secret:another-AbCdEf"),
        ("confPath", "/etc/shadow"),
        ("confPath", "/etc/slurm/../shadow/slurmdbd.conf"),
        ("owner", "nobody"),
        ("service", "sshd"),
    ],
)
def test_anything_else_is_refused_as_ssm_would(embedded: Embedded, name: str, value: str) -> None:
    parameters = {"secretId": [embedded.site.secret_arn], name: [value]}
    with pytest.raises(DocumentParametersRejected):
        agent_command_line(request(embedded, **parameters), boto3.client("ssm"))


def test_the_secret_pattern_is_this_stacks_secret_only(embedded: Embedded) -> None:
    secret = embedded.site.secret_arn
    for other in (secret + "x", "x" + secret, secret[:-1] + ("A" if secret[-1] != "A" else "B")):
        with pytest.raises(DocumentParametersRejected, match="secretId"):
            agent_command_line(request(embedded, secretId=[other]), boto3.client("ssm"))
