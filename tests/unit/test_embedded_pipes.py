"""The embedded stack's pipe delivery (``hyperpod_ha_dev.embedded.pipes``) renders an input
template as EventBridge Pipes does: a placeholder inside a JSON string is the value's text,
JSON-escaped; elsewhere the value as JSON; a path the record lacks is refused with its reason."""

from __future__ import annotations

import json

import pytest

from hyperpod_ha_dev.embedded.pipes import PipeRejected, render

RECORD = {
    "messageId": "m-1",
    "body": {
        "Subject": 'a "quoted" \\ subject\nnext',
        "MessageAttributes": {"n": {"Value": "1"}},
        "List": [3, 4],
    },
}
RESERVED = {"aws.pipes.pipe-name": "trigger"}


def test_a_placeholder_in_a_string_is_escaped_text_and_outside_one_is_json() -> None:
    text = render(
        '{"s": "<$.body.Subject>", "x": "n=<$.body.MessageAttributes.n.Value>", "o": <$.body.List>,'
        ' "i": <$.body.List[1]>, "pipe": "<aws.pipes.pipe-name>", "l": "<$.body.List>"}',
        RECORD,
        RESERVED,
    )
    assert json.loads(text) == {
        "s": RECORD["body"]["Subject"],  # type: ignore[index]
        "x": "n=1",
        "o": [3, 4],
        "i": 4,
        "pipe": "trigger",
        "l": "[3, 4]",
    }


def test_an_escaped_quote_in_the_template_does_not_end_its_string() -> None:
    assert json.loads(render('{"s": "say \\"<$.messageId>\\""}', RECORD, RESERVED)) == {"s": 'say "m-1"'}


@pytest.mark.parametrize("path", ["$.body.Missing", "$.body.List[7]", "$.messageId.deeper"])
def test_a_path_the_record_lacks_is_refused_naming_it(path: str) -> None:
    with pytest.raises(PipeRejected) as refused:
        render(f'{{"v": "<{path}>"}}', RECORD, RESERVED)
    assert str(refused.value) == f"the input template's <{path}> is not in the message"


def test_an_unknown_variable_is_refused() -> None:
    with pytest.raises(PipeRejected, match="not a variable"):
        render('{"v": "<aws.pipes.event.json>"}', RECORD, RESERVED)
