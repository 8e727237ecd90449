"""Every inline policy of the template is of the policy language version that reads variables."""

from __future__ import annotations

import json

from tests.conftest import ROOT
from tests.unit.test_iam import translated


def test_every_policy_this_template_writes_is_of_the_version_that_reads_variables() -> None:
    # Without "2012-10-17", IAM reads ${aws:userid} as literal text: the session conditions above
    # would never match in a real account.
    template = translated("session-manager")
    unversioned = [
        f"{logical_id}/{policy['PolicyName']}"
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::IAM::Role"
        for policy in resource["Properties"].get("Policies", [])
        if "${aws:" in json.dumps(policy["PolicyDocument"])
        and policy["PolicyDocument"].get("Version") != "2012-10-17"
    ]
    assert unversioned == []
    written = [line for line in (ROOT / "template.yaml").read_text().splitlines() if "- Statement:" in line]
    assert written == [], 'an inline policy starts with its Version: "2012-10-17"'
