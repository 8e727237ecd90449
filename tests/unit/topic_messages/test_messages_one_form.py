"""Every message the stack publishes to its notification topic is in the one form: the code
publishes to SNS only through ``topic_messages.publish`` (which refuses a message without the
subject form or the attributes), and no alarm or rule of the template sends raw JSON to the topic
but the notice path's own alarms (which cannot go through the path they watch)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from hyperpod_ha.notices.function import OWN_ALARMS
from hyperpod_ha_stack.template import load_template
from tests.unit.test_layout import DEV, FUNCTIONS, ROOT, RUNTIME, python_files

TOPIC = {"Ref": "NotificationTopic"}
# The one place that publishes ours; the simulation publishes HyperPod's own status message to
# the cluster's failover topic (the lifecycle scripts' part), not to the notification topic.
ALLOWED = {"layers/hyperpod_ha/topic_messages/form.py", "dev/hyperpod_ha_dev/simulation/engine.py"}


def sns_publishes(directory: Path, root: Path = ROOT) -> list[str]:
    """``<path from root>:<line>`` of each SNS Publish (``.publish(TopicArn=...)``, ``publish_batch``)."""
    found = []
    for path in python_files(directory):
        if "embedded" in path.parts:
            continue  # the embedded stack delivers what moto would; it publishes nothing of ours
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            keywords = {keyword.arg for keyword in node.keywords}
            if node.func.attr == "publish_batch" or (node.func.attr == "publish" and "TopicArn" in keywords):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_only_topic_messages_publishes_to_sns() -> None:
    found = [place for directory in (RUNTIME, FUNCTIONS, DEV) for place in sns_publishes(directory)]
    assert [place for place in found if place.rsplit(":", 1)[0] not in ALLOWED] == []
    assert any(place.startswith("layers/hyperpod_ha/topic_messages/form.py:") for place in found)


def test_the_check_finds_a_publish_of_its_own(tmp_path: Path) -> None:
    package = tmp_path / "hyperpod_ha"
    package.mkdir()
    (package / "drill.py").write_text(
        "def tell(sns, arn):\n    sns.publish(TopicArn=arn, Subject='HyperPod x is Failed', Message='m')\n"
    )
    assert sns_publishes(package, tmp_path) == ["hyperpod_ha/drill.py:2"]


def _targets(resource: dict[str, Any]) -> list[Any]:
    properties = resource.get("Properties", {})
    if resource["Type"] == "AWS::CloudWatch::Alarm":
        return [*properties.get("AlarmActions", []), *properties.get("OKActions", [])]
    if resource["Type"] == "AWS::Events::Rule":
        return [target["Arn"] for target in properties.get("Targets", [])]
    if resource["Type"] == "AWS::Serverless::Function":
        return [
            destination.get("Destination")
            for destination in properties.get("EventInvokeConfig", {}).get("DestinationConfig", {}).values()
        ]
    return []


def sending_to_the_topic(resources: dict[str, Any]) -> set[str]:
    """The resources that would send to the topic without going through the code's form."""
    return {logical_id for logical_id, resource in resources.items() if TOPIC in _targets(resource)}


def test_no_rule_or_alarm_sends_raw_json_to_the_topic_but_the_notice_paths_own() -> None:
    resources = load_template(ROOT / "template.yaml")["Resources"]
    assert sending_to_the_topic(resources) == set(OWN_ALARMS)


def test_the_template_check_finds_a_rule_that_forwards_to_the_topic() -> None:
    rule = {"Type": "AWS::Events::Rule", "Properties": {"Targets": [{"Id": "notify", "Arn": TOPIC}]}}
    alarm = {"Type": "AWS::CloudWatch::Alarm", "Properties": {"OKActions": [TOPIC]}}
    assert sending_to_the_topic({"RotationFailedRule": rule, "XAlarm": alarm}) == {
        "RotationFailedRule",
        "XAlarm",
    }
