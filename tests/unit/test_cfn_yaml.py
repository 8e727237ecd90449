"""The block YAML template.yaml's generated end is written in reads back, with SAM's reader, as
the very value it was written from."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperpod_ha_stack.cfn_yaml import block
from hyperpod_ha_stack.template import parse_template

# What trips a YAML writer: indicators, quotes, escapes, words YAML reads as other types,
# line breaks (with and without a last one), leading and trailing spaces, tabs, other scripts.
TRICKY = ["yes", "no", "on", "null", "~", "0", "1.5", "0x1F", "2024-01-01", "-", "- a", "? x", "a: b", "a #b"]
TEXT = st.one_of(
    st.sampled_from(TRICKY),
    st.text(alphabet=st.sampled_from(list("aZ09 :#-'\"\\\n\t$!&*|>%@`?,[]{}.é")), max_size=30),
)
NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,11}", fullmatch=True)


def functions(value: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """CloudFormation's functions in the shapes the template uses them."""
    return st.one_of(
        st.builds(lambda name: {"Ref": name}, NAME),
        st.builds(lambda resource, attribute: {"Fn::GetAtt": [resource, attribute]}, NAME, NAME),
        st.builds(lambda text: {"Fn::Sub": text}, TEXT),
        st.builds(
            lambda text, names: {"Fn::Sub": [text, names]}, TEXT, st.dictionaries(NAME, value, max_size=2)
        ),
        st.builds(lambda name, yes, no: {"Fn::If": [name, yes, no]}, NAME, value, value),
        st.builds(lambda name, key: {"Fn::FindInMap": [name, key, "Seconds"]}, NAME, st.one_of(NAME, value)),
        st.builds(lambda inner: {"Fn::Base64": inner}, value),
        st.builds(lambda parts: {"Fn::Join": ["", parts]}, st.lists(value, max_size=3)),
    )


VALUES = st.recursive(
    st.one_of(TEXT, st.integers(), st.booleans(), st.none()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3), functions(inner)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_every_value_reads_back_as_written(value: Any) -> None:
    written = block({"Resources": {"Thing": value}}, 0)
    assert parse_template(written)["Resources"]["Thing"] == value, written


@pytest.mark.parametrize("text", ["\n 0", "\n\n  a\nb", " a\nb"])
def test_text_whose_first_line_with_text_starts_with_a_blank_reads_back(text: str) -> None:
    written = block({"Resources": {"Thing": text}}, 0)
    assert parse_template(written)["Resources"]["Thing"] == text, written


def test_text_of_several_lines_is_a_literal_block_and_functions_use_their_short_tags() -> None:
    written = block(
        {
            "Script": "#!/bin/bash\necho \"$1\" # 'quoted'\n",
            "Period": {"Fn::FindInMap": ["Periods", {"Ref": "Minutes"}, "Seconds"]},
            "Encoded": {"Fn::Base64": {"Fn::FindInMap": ["Scripts", "Probe", "Script"]}},
        },
        1,
    )
    assert written.splitlines() == [
        "  Script: |",
        "    #!/bin/bash",
        "    echo \"$1\" # 'quoted'",
        "  Period: !FindInMap [Periods, !Ref Minutes, Seconds]",
        # CloudFormation takes no short tag right after another: the outer one in full.
        "  Encoded:",
        "    Fn::Base64: !FindInMap [Scripts, Probe, Script]",
    ]
