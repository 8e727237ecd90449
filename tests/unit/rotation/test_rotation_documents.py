"""The roll-out's SSM documents: the node script they carry, the command they render, the
parameters they admit, and the template's copy (the roll-out itself: test_rotation_rollout.py)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from hyperpod_ha.rotation import slurmdbd_credentials
from hyperpod_ha.rotation.rollout import RolloutSettings
from hyperpod_ha.rotation.rollout_document import (
    DEFAULT_CONF_PATH,
    DOCUMENT_PARAMETERS,
    DocumentParametersInvalid,
    command_document,
    node_command,
    render_node_command,
    secret_arn_pattern,
)
from hyperpod_ha_dev.cfn import Context, Resolver
from hyperpod_ha_stack.template import load_template, with_fixed_values
from tests.fakes.rollout_nodes import DOCUMENT, SECRET_ARN


def _decoded(command: str) -> bytes:
    encoded = re.search(r"echo ([A-Za-z0-9+/=]+) \| base64 -d \| python3 - ", command)
    assert encoded is not None
    return base64.b64decode(encoded.group(1))


def test_both_documents_carry_exactly_the_node_script() -> None:
    script = Path(slurmdbd_credentials.__file__).read_bytes()
    assert _decoded(node_command()) == script
    (step,) = command_document()["mainSteps"]
    assert step["inputs"]["runCommand"] == [node_command()]
    assert node_command().endswith('python3 - {{ secretId }} {{ confPath }} {{ owner }} {{ verifySeconds }}"')
    assert node_command() == node_command()  # deterministic: the template can be checked for drift


def test_rendering_fills_defaults_and_enforces_the_allowed_patterns() -> None:
    rendered = render_node_command({"secretId": [SECRET_ARN]})
    assert rendered.endswith(f'python3 - {SECRET_ARN} {DEFAULT_CONF_PATH} slurm 45"')
    for name, bad in [
        ("secretId", SECRET_ARN + ";reboot"),
        ("confPath", "/etc/x y"),
        ("verifySeconds", "1000"),
    ]:
        with pytest.raises(DocumentParametersInvalid, match=name):
            render_node_command({"secretId": [SECRET_ARN], name: [bad]})
    with pytest.raises(DocumentParametersInvalid, match="unknown"):
        render_node_command({"secretId": [SECRET_ARN], "password": ["x"]})
    assert set(RolloutSettings(SECRET_ARN, DOCUMENT).document_parameters()) == set(DOCUMENT_PARAMETERS)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        # Root on the controller rewrites and chowns this file: only slurmdbd.conf itself.
        ("confPath", "/etc/shadow"),
        ("confPath", "/root/.ssh/authorized_keys"),
        ("confPath", "/tmp/slurmdbd.conf"),
        ("confPath", "/opt/slurm/etc/slurm.conf"),
        ("confPath", "/opt/slurm/etc/../../../etc/slurmdbd.conf"),
        ("confPath", "/opt/slurm/etc/slurmdbd.conf.d/slurmdbd.conf"),
        ("confPath", "/opt/slurm/etc/slurmdbdXconf"),
        # Whoever owns it reads the database password.
        ("owner", "nobody"),
        ("owner", "ubuntu"),
        ("owner", "slurm2"),
        ("owner", "$(id)"),
        # The service is fixed: no parameter restarts another unit.
        ("service", "sshd"),
        ("service", "slurmdbd"),
    ],
)
def test_the_document_admits_only_what_the_roll_out_needs(name: str, value: str) -> None:
    with pytest.raises(DocumentParametersInvalid, match=name):
        render_node_command({"secretId": [SECRET_ARN], name: [value]})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("confPath", "/opt/slurm/etc/slurmdbd.conf"),
        ("confPath", "/etc/slurm/slurmdbd.conf"),  # the lab's controllers (simulation/lab/)
        ("owner", "slurm"),
        ("owner", "root"),  # the lab's slurmdbd.conf
    ],
)
def test_the_document_admits_hyperpod_and_the_lab(name: str, value: str) -> None:
    assert f" {value} " in render_node_command({"secretId": [SECRET_ARN], name: [value]})


def test_the_lab_uses_a_path_and_owner_the_document_admits() -> None:
    from hyperpod_ha_dev.simulation.lab import LAB_SLURMDBD_CONF

    render_node_command({"secretId": [SECRET_ARN], "confPath": [LAB_SLURMDBD_CONF], "owner": ["root"]})


def test_the_template_document_is_the_one_this_code_builds(root: Path) -> None:
    template = load_template(root / "template.yaml")
    document = template["Resources"]["SlurmdbdRolloutDocument"]["Properties"]
    assert document["DocumentType"] == "Session"
    content = with_fixed_values(template, document["Content"])
    assert content["sessionType"] == "NonInteractiveCommands"
    linux = {"commands": node_command(), "runAsElevated": True, "separateOutputStream": True}
    assert content["properties"] == {"linux": linux}, "run `make generate`"
    # SSM refuses a session whose parameters the document does not declare, and a document
    # whose command names parameters it does not declare.
    parameters = dict(content["parameters"])
    secret = parameters.pop("secretId")
    assert parameters == {k: v for k, v in DOCUMENT_PARAMETERS.items() if k != "secretId"}
    assert {k: v for k, v in secret.items() if k != "allowedPattern"} == {
        k: v for k, v in DOCUMENT_PARAMETERS["secretId"].items() if k != "allowedPattern"
    }


@pytest.mark.parametrize(
    "arn",
    [
        SECRET_ARN,
        "arn:aws:secretsmanager:us-east-1:123456789012:secret:slurm.db+x/acct_1=@-AbCdEf",
        "arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:db-AbCdEf",
    ],
)
def test_the_template_admits_only_the_stacks_own_secret(root: Path, arn: str) -> None:
    template = load_template(root / "template.yaml")
    spec = template["Resources"]["SlurmdbdRolloutDocument"]["Properties"]["Content"]["parameters"]["secretId"]
    context = Context(
        parameters={"DbSecretArn": arn}, pseudo={}, ref=lambda n: n, get_att=lambda *a: a, conditions={}
    )
    pattern = Resolver(template, context).resolve(spec["allowedPattern"])
    assert pattern == secret_arn_pattern(arn)
    assert re.fullmatch(pattern, arn)
    assert re.fullmatch(template["Parameters"]["DbSecretArn"]["AllowedPattern"], arn)
    for other in [
        arn[:-1] + ("x" if arn[-1] != "x" else "y"),  # another secret's suffix
        arn + "x",
        arn.replace(":secret:", ":secret:other-"),
        arn.replace(".", "X").replace("+", "Y") if ("." in arn or "+" in arn) else arn + "/",
        arn.replace("+", "++") if "+" in arn else "x" + arn,
    ]:
        assert not re.fullmatch(pattern, other), other
