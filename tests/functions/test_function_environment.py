"""What every function's environment carries, as the embedded stack resolves it from the template."""

from __future__ import annotations

from samtranslator.yaml_helper import yaml_parse

from hyperpod_ha.observability import SERVICE
from tests.conftest import ROOT, Embedded


def _functions() -> list[str]:
    resources = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]
    return [name for name, resource in resources.items() if resource["Type"] == "AWS::Serverless::Function"]


def test_every_function_uses_botocores_standard_retries_with_a_bounded_count(embedded: Embedded) -> None:
    functions = _functions()
    assert len(functions) == 13
    for logical_id in functions:
        environment = embedded.stack.function(logical_id).environment
        assert environment["AWS_RETRY_MODE"] == "standard", logical_id
        assert 2 <= int(environment["AWS_MAX_ATTEMPTS"]) <= 5, logical_id
        assert environment["POWERTOOLS_SERVICE_NAME"] == SERVICE, logical_id
