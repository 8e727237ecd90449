"""The readers of a request's fields: a text field and a cluster's name."""

from __future__ import annotations

import re

import pytest

from hyperpod_ha.errors import InputRejected
from hyperpod_ha.request_fields import is_cluster_name, text_field
from hyperpod_ha_stack.template import load_template
from tests.conftest import ROOT


class Rejected(InputRejected):
    pass


ACCEPTED = ["c", "ml-cluster-1", "a--b", "A" * 63]
REFUSED_TEXT = ["", "-c", "c-", "c_1", "c; rm", "c\n", "A" * 64]


@pytest.mark.parametrize("name", ACCEPTED)
def test_cluster_names_sagemaker_accepts(name: str) -> None:
    assert is_cluster_name(name)


@pytest.mark.parametrize("name", [None, 7, *REFUSED_TEXT])
def test_anything_else_is_not_a_cluster_name(name: object) -> None:
    assert not is_cluster_name(name)


def test_the_template_s_cluster_name_pattern_agrees() -> None:
    pattern = re.compile(load_template(ROOT / "template.yaml")["Parameters"]["ClusterName"]["AllowedPattern"])
    for name in ACCEPTED + REFUSED_TEXT:
        # CloudFormation matches the whole value; "$" would also accept a trailing newline.
        assert (pattern.fullmatch(name) is not None) == is_cluster_name(name), name


def test_a_text_field_is_stripped_and_optional_when_asked() -> None:
    assert text_field({"reason": " why "}, "reason", Rejected) == "why"
    assert text_field({"reason": ""}, "reason", Rejected, required=False) == ""
    assert text_field({}, "reason", Rejected, required=False) == ""


@pytest.mark.parametrize(
    ("request_", "reason"),
    [
        ({}, "reason is required"),
        ({"reason": None}, "reason is required"),
        ({"reason": 3}, "reason must be a string"),
    ],
)
def test_a_missing_or_malformed_text_field_raises_the_callers_error(
    request_: dict[str, object], reason: str
) -> None:
    with pytest.raises(Rejected, match=reason):
        text_field(request_, "reason", Rejected)


def test_a_field_of_the_wrong_type_is_rejected_even_when_optional() -> None:
    with pytest.raises(Rejected, match="reason must be a string"):
        text_field({"reason": ["x"]}, "reason", Rejected, required=False)
