"""The KMS grant of encrypted sessions (SessionKmsKeyArn): only with a key, on that key, for a session."""

from __future__ import annotations

from tests.unit.test_iam import _actions, _listed, statements, translated


def test_session_data_keys_only_with_a_key_on_that_key_for_a_session() -> None:
    template = translated("session-manager")
    found = []
    for role, statement in statements(template):
        if any(action.startswith("kms:") for action in _actions(statement)) and statement.get("Sid") == (
            "SessionDataKeys"
        ):
            found.append(role)
            assert _actions(statement) == ["kms:GenerateDataKey"]
            assert statement["Resource"] == {"Ref": "SessionKmsKeyArn"}
            assert statement["Condition"] == {
                "StringLike": {"kms:EncryptionContext:aws:ssm:SessionId": "*"},
                "ForAllValues:StringEquals": {
                    "kms:EncryptionContextKeys": [
                        "aws:ssm:SessionId",
                        "aws:ssm:TargetId",
                        "aws:ssm:RandomChallenge",
                    ]
                },
            }
    # every role that starts sessions, and only those
    starts = {role for role, s in statements(template) if "ssm:StartSession" in _actions(s)}
    assert set(found) == starts
    assert len(found) == 5
    # granted only when the key is given (and only with Session Manager)
    for resource in template["Resources"].values():
        for policy in (
            resource.get("Properties", {}).get("Policies", []) if resource["Type"] == "AWS::IAM::Role" else []
        ):
            for statement in _listed(policy["PolicyDocument"]["Statement"]):
                if isinstance(statement, dict) and "Fn::If" in statement:
                    name, when_true, _ = statement["Fn::If"]
                    if isinstance(when_true, dict) and when_true.get("Sid") == "SessionDataKeys":
                        assert name == "EncryptsSessions"
    assert template["Conditions"]["EncryptsSessions"] == {
        "Fn::And": [
            {"Condition": "UsesSessionManager"},
            {"Fn::Not": [{"Fn::Equals": [{"Ref": "SessionKmsKeyArn"}, ""]}]},
        ]
    }
