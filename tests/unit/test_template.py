"""template.yaml: what cfn-lint and the rest of the project rely on, checked without AWS."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import cfnlint.api
import pytest

from hyperpod_ha_stack.command_documents import COMMAND_DOCUMENTS
from hyperpod_ha_stack.documents import NODE_COMMANDS, NODE_SCRIPTS, command_of
from hyperpod_ha_stack.generate import stale
from hyperpod_ha_stack.template import load_template, with_fixed_values
from tests.conftest import EVENTS, ROOT

TEMPLATE = load_template(ROOT / "template.yaml")
FUNCTIONS = {k: v for k, v in TEMPLATE["Resources"].items() if v["Type"] == "AWS::Serverless::Function"}
ASL = ROOT / "statemachine" / "failover_verification.asl.json"


def test_the_state_machine_definition_passes_cfn_lint() -> None:
    """cfn-lint checks an inline definition (not a DefinitionUri): lint one built from the file."""
    machine = TEMPLATE["Resources"]["FailoverVerificationStateMachine"]["Properties"]
    substitutions = dict.fromkeys(
        machine["DefinitionSubstitutions"], "arn:aws:lambda:us-east-1:123456789012:function:x"
    )
    substitutions.update(
        StateTableName="table",
        SettleSeconds="0",
        MaxAttempts="30",
        BackoffSeconds="5",
        ConvergenceMarginSeconds="20",
        SnapshotPollSeconds="30",
    )
    definition = re.sub(r"\$\{(\w+)\}", lambda m: substitutions[m.group(1)], ASL.read_text())
    template = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {
            "Role": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "AssumeRolePolicyDocument": {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Principal": {"Service": "states.amazonaws.com"},
                                "Action": "sts:AssumeRole",
                            }
                        ],
                    }
                },
            },
            "Machine": {
                "Type": "AWS::StepFunctions::StateMachine",
                "Properties": {
                    "Definition": json.loads(definition),
                    "RoleArn": {"Fn::GetAtt": ["Role", "Arn"]},
                },
            },
        },
    }
    assert cfnlint.api.lint(json.dumps(template)) == []


def test_a_broken_definition_is_caught_by_that_check() -> None:
    template = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {
            "Machine": {
                "Type": "AWS::StepFunctions::StateMachine",
                "Properties": {
                    "Definition": {"StartAt": "Nowhere", "States": {"A": {"Type": "Pass", "Next": "B"}}},
                    "RoleArn": "arn:aws:iam::123456789012:role/r",
                },
            }
        },
    }
    assert cfnlint.api.lint(json.dumps(template)) != []


def test_the_whole_template_passes_cfn_lint() -> None:
    assert cfnlint.api.lint((ROOT / "template.yaml").read_text()) == []


def test_the_generated_parts_are_current() -> None:
    """template.yaml's end and the settings checks are what their descriptions make."""
    assert stale(ROOT) == [], "run `make generate`"


@pytest.mark.parametrize("key", sorted(NODE_COMMANDS))
def test_each_session_document_runs_its_current_command(key: str) -> None:
    """The hand-written command is the runtime's line with the script's text encoded by
    CloudFormation: what reaches the node is that line, byte for byte."""
    document = TEMPLATE["Resources"][f"{key}Document"]["Properties"]
    assert document["DocumentType"] == "Session"
    commands = document["Content"]["properties"]["linux"]["commands"]
    assert commands == command_of(key)
    build, _ = NODE_COMMANDS[key]
    assert with_fixed_values(TEMPLATE, commands) == build()


@pytest.mark.parametrize("key", sorted(NODE_SCRIPTS))
def test_the_template_holds_each_node_script_as_its_source_file_is(key: str) -> None:
    """Its file, with the kit's shared part in place where it names it (test_node_scripts.py)."""
    source = (ROOT / NODE_SCRIPTS[key].path).read_text()
    script = TEMPLATE["Mappings"]["NodeScripts"][key]["Script"]
    assert script == NODE_SCRIPTS[key].text(), "run `make generate`"
    assert all(line in script.splitlines() for line in source.splitlines() if not line.startswith(". "))


@pytest.mark.parametrize("logical_id", sorted(FUNCTIONS))
def test_every_function_is_arm64_python313_with_a_handler(logical_id: str) -> None:
    globals_ = TEMPLATE["Globals"]["Function"]
    assert (globals_["Runtime"], globals_["Architectures"]) == (
        "python3.13",
        [{"Ref": "FunctionArchitecture"}],
    )
    assert "Architectures" not in FUNCTIONS[logical_id]["Properties"]
    code = ROOT / FUNCTIONS[logical_id]["Properties"]["CodeUri"]
    assert (code / "app.py").is_file()
    assert "def lambda_handler(" in (code / "app.py").read_text()


def test_the_architecture_is_arm64_unless_chosen_and_the_layer_follows_it() -> None:
    parameter = TEMPLATE["Parameters"]["FunctionArchitecture"]
    assert (parameter["Default"], parameter["AllowedValues"]) == ("arm64", ["arm64", "x86_64"])
    layer = TEMPLATE["Resources"]["HyperpodHaLayer"]
    assert layer["Properties"]["CompatibleArchitectures"] == [{"Ref": "FunctionArchitecture"}]
    # sam build resolves it and writes it to build.toml, where layers/Makefile reads it.
    assert layer["Metadata"]["BuildArchitecture"] == {"Ref": "FunctionArchitecture"}


def test_the_local_endpoint_is_absent_unless_given() -> None:
    endpoint = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]["AWS_ENDPOINT_URL"]
    assert endpoint == {"Fn::If": ["UsesLocalEndpoint", {"Ref": "LocalEndpointUrl"}, {"Ref": "AWS::NoValue"}]}
    assert TEMPLATE["Parameters"]["LocalEndpointUrl"]["Default"] == ""


def _rules_admit(**parameters: str) -> list[str]:
    """The descriptions of the template's rule assertions that ``parameters`` break, as
    CloudFormation evaluates them at create and update (the template's defaults elsewhere)."""
    from hyperpod_ha_dev.cfn import evaluate_conditions
    from hyperpod_ha_dev.embedded.sam import SAMPLE_PARAMETERS

    values = (
        {name: spec.get("Default", "") for name, spec in TEMPLATE["Parameters"].items()}
        | SAMPLE_PARAMETERS
        | parameters
    )

    def holds(expression: Any) -> bool:
        return evaluate_conditions({"Conditions": {"held": expression}}, values)["held"]

    broken = []
    for rule in TEMPLATE["Rules"].values():
        if "RuleCondition" in rule and not holds(rule["RuleCondition"]):
            continue  # CloudFormation asserts a rule only when its condition holds
        broken += [a["AssertDescription"] for a in rule["Assertions"] if not holds(a["Assert"])]
    return broken


NO_ROTATION = {"DbHost": "", "SubnetIds": "", "SecurityGroupIds": ""}


def test_a_stack_without_rotation_needs_no_database_or_network() -> None:
    # Issue 40: the rotation's parameters have defaults, so sam deploy asks for none of them.
    parameters = TEMPLATE["Parameters"]
    assert {parameters[name].get("Default") for name in NO_ROTATION} == {""}
    assert _rules_admit(**NO_ROTATION) == []
    assert _rules_admit(**NO_ROTATION, RotationDays="0") == []


def test_a_stack_with_rotation_must_name_its_database_and_network() -> None:
    broken = _rules_admit(**NO_ROTATION, RotationDays="30")
    assert [text.split(",")[1].split()[0] for text in broken] == ["DbHost", "SubnetIds", "SecurityGroupIds"]
    assert _rules_admit(RotationDays="30") == []  # the sample's host, subnet and security group
    assert _rules_admit(RotationDays="30", SubnetIds="subnet-0123456789abcdef0,") != []  # an empty item


@pytest.mark.parametrize(
    "given", [{"SubnetIds": "", "SecurityGroupIds": "sg-0123456789abcdef0"}, {"SecurityGroupIds": ""}]
)
def test_the_rotation_network_is_given_whole(given: dict[str, str]) -> None:
    (broken,) = _rules_admit(**given)
    assert broken.startswith("SubnetIds and SecurityGroupIds go together")


def test_the_rotation_function_is_in_the_vpc_only_when_its_network_is_given() -> None:
    from hyperpod_ha_dev.cfn import evaluate_conditions

    def in_vpc(**given: Any) -> bool:
        values = {name: spec.get("Default", "") for name, spec in TEMPLATE["Parameters"].items()} | given
        return evaluate_conditions(TEMPLATE, values)["HasRotationNetwork"]

    assert not in_vpc()
    assert in_vpc(SubnetIds=["subnet-0123456789abcdef0"], SecurityGroupIds=["sg-0123456789abcdef0"])
    vpc = TEMPLATE["Resources"]["RotateDbSecretFunction"]["Properties"]["VpcConfig"]
    assert vpc["Fn::If"][0] == "HasRotationNetwork"
    assert vpc["Fn::If"][2] == {"Ref": "AWS::NoValue"}


@pytest.mark.parametrize(
    "endpoint", ["http://127.0.0.1:4566", "http://172.17.0.1:5000", "http://10.0.0.1:80"]
)
def test_a_deployment_with_a_local_endpoint_is_refused_by_cloudformation(endpoint: str) -> None:
    # The one test seam left in the stack (sam local needs the variable declared) cannot be
    # used by a deployed stack: CloudFormation evaluates the rule; sam local and moto do not.
    (broken,) = _rules_admit(LocalEndpointUrl=endpoint)
    assert broken.startswith("LocalEndpointUrl is for sam local and the embedded stack only")
    assert _rules_admit() == []
    assert _rules_admit(LocalEndpointUrl="") == []


def test_paging_is_refused_without_its_secret_and_the_webhook_without_its_url() -> None:
    secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:pagerduty-AbCdEf"
    assert _rules_admit() == []
    (no_secret,) = _rules_admit(PagingService="pagerduty")
    assert no_secret.startswith("PagingService needs PagingSecretArn")
    assert _rules_admit(PagingService="pagerduty", PagingSecretArn=secret) == []
    (no_url,) = _rules_admit(PagingService="webhook", PagingSecretArn=secret)
    assert no_url == "PagingService=webhook needs PagingWebhookUrl."
    assert (
        _rules_admit(PagingService="webhook", PagingSecretArn=secret, PagingWebhookUrl="https://h.example/x")
        == []
    )


def test_the_local_endpoint_is_the_only_way_to_another_endpoint() -> None:
    # No function sets AWS_ENDPOINT_URL (or a service's own endpoint variable) itself.
    for logical_id, resource in FUNCTIONS.items():
        variables = resource["Properties"].get("Environment", {}).get("Variables", {})
        assert not [name for name in variables if name.startswith("AWS_ENDPOINT_URL")], logical_id


def test_events_env_json_covers_every_function_and_its_variables() -> None:
    env: dict[str, dict[str, Any]] = json.loads((EVENTS / "env.json").read_text())
    assert set(env) == set(FUNCTIONS)
    for logical_id, resource in FUNCTIONS.items():
        declared = {
            **TEMPLATE["Globals"]["Function"]["Environment"]["Variables"],
            **resource["Properties"].get("Environment", {}).get("Variables", {}),
        }
        declared.pop("AWS_ENDPOINT_URL")  # only with LocalEndpointUrl (sam local)
        assert set(env[logical_id]) == set(declared), logical_id


def test_every_queue_table_and_topic_is_encrypted() -> None:
    for logical_id, resource in TEMPLATE["Resources"].items():
        properties = resource.get("Properties", {})
        if resource["Type"] == "AWS::SQS::Queue":
            assert properties.get("SqsManagedSseEnabled") is True, logical_id
        elif resource["Type"] == "AWS::DynamoDB::Table":
            assert properties["SSESpecification"]["SSEEnabled"] is True, logical_id
        elif resource["Type"] == "AWS::SNS::Topic":
            assert properties.get("KmsMasterKeyId"), logical_id


@pytest.mark.parametrize("logical_id", sorted(COMMAND_DOCUMENTS))
def test_the_command_documents_hold_the_current_probe_and_roll_out(logical_id: str) -> None:
    build, _ = COMMAND_DOCUMENTS[logical_id]
    content = TEMPLATE["Resources"][logical_id]["Properties"]["Content"]
    assert with_fixed_values(TEMPLATE, content) == build()


@pytest.mark.parametrize("logical_id", ["HealthCheckFunction", "FailoverDrillFunction", "WatchdogFunction"])
def test_start_session_is_limited_to_our_documents_and_the_clusters(logical_id: str) -> None:
    statements = FUNCTIONS[logical_id]["Properties"]["Policies"][0]["Statement"]
    # A statement granted only with one transport is wrapped in Fn::If: look at what it grants.
    granted = [s["Fn::If"][1] if "Fn::If" in s else s for s in statements]
    (start,) = [s for s in granted if s.get("Action") == "ssm:StartSession"]
    assert start["Condition"] == {"BoolIfExists": {"ssm:SessionDocumentAccessCheck": "true"}}
    assert "*" not in json.dumps(start["Resource"]).replace("cluster/*", "").replace("instance/*", "")


def test_the_run_defaults_check_at_once_and_converge_on_slurmctld_timeout() -> None:
    parameters = TEMPLATE["Parameters"]
    defaults = {name: spec.get("Default") for name, spec in parameters.items()}
    assert defaults["SettleSeconds"] == 0
    assert (defaults["BackoffSeconds"], defaults["ConvergenceMarginSeconds"]) == (5, 20)
    assert defaults["MaxAttempts"] == 30
    # Every run setting has bounds: the state machine checks the same ones.
    for name in ("SettleSeconds", "MaxAttempts", "BackoffSeconds", "ConvergenceMarginSeconds"):
        assert {"MinValue", "MaxValue"} <= parameters[name].keys(), name


def test_the_early_warnings_metrics_and_their_alarm_can_be_turned_off() -> None:
    parameter = TEMPLATE["Parameters"]["EarlyWarningMetrics"]
    assert (parameter["Default"], parameter["AllowedValues"]) == ("on", ["on", "off"])
    assert TEMPLATE["Conditions"]["EarlyWarningMetricsOn"] == {
        "Fn::And": [
            {"Condition": "WatchdogEnabled"},
            {"Fn::Equals": [{"Ref": "EarlyWarningMetrics"}, "on"]},
        ]
    }
    resources = TEMPLATE["Resources"]
    conditioned = [k for k, v in resources.items() if v.get("Condition") == "EarlyWarningMetricsOn"]
    assert conditioned == ["AccountingQueueFillingAlarm"]
    variables = FUNCTIONS["WatchdogFunction"]["Properties"]["Environment"]["Variables"]
    assert variables["EARLY_WARNING_METRICS"] == {"Ref": "EarlyWarningMetrics"}


def test_the_watchdog_is_scheduled_and_can_be_turned_off() -> None:
    resources = TEMPLATE["Resources"]
    parameter = TEMPLATE["Parameters"]["WatchdogRateMinutes"]
    assert (parameter["Default"], parameter["MinValue"], parameter["MaxValue"]) == (5, 0, 60)
    assert TEMPLATE["Conditions"]["WatchdogEnabled"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "WatchdogRateMinutes"}, 0]}]
    }
    watchdog = [k for k, v in resources.items() if v.get("Condition") == "WatchdogEnabled"]
    assert sorted(watchdog) == [
        "NoStandbyReadyAlarm",
        "WatchdogDeadLetterQueue",
        "WatchdogDeadLetterQueueAlarm",
        "WatchdogErrorsAlarm",
        "WatchdogFunction",
        "WatchdogLogGroup",
        "WatchdogSchedule",
        "WatchdogScheduleRole",
        "WatchdogThrottlesAlarm",
    ]
    schedule = resources["WatchdogSchedule"]["Properties"]
    assert schedule["Target"]["Arn"] == {"Fn::GetAtt": ["WatchdogFunction", "Arn"]}
    assert schedule["Target"]["DeadLetterConfig"]["Arn"] == {"Fn::GetAtt": ["WatchdogDeadLetterQueue", "Arn"]}
    tick = json.loads(schedule["Target"]["Input"])
    assert tick == {
        "source": "hyperpod-ha.watchdog",
        "tick_id": "<aws.scheduler.execution-id>",
        "scheduled_time": "<aws.scheduler.scheduled-time>",
    }
    function = resources["WatchdogFunction"]["Properties"]
    assert function["DeadLetterQueue"]["TargetArn"] == {"Fn::GetAtt": ["WatchdogDeadLetterQueue", "Arn"]}
    assert function["EventInvokeConfig"]["MaximumRetryAttempts"] == 0


def test_the_scheduler_role_can_invoke_only_the_watchdog() -> None:
    role = TEMPLATE["Resources"]["WatchdogScheduleRole"]["Properties"]
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"}
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}
    (policy,) = role["Policies"]
    invoke, dead_letter = policy["PolicyDocument"]["Statement"]
    assert (invoke["Action"], invoke["Resource"]) == (
        "lambda:InvokeFunction",
        {"Fn::GetAtt": ["WatchdogFunction", "Arn"]},
    )
    assert (dead_letter["Action"], dead_letter["Resource"]) == (
        "sqs:SendMessage",
        {"Fn::GetAtt": ["WatchdogDeadLetterQueue", "Arn"]},
    )


def test_the_watchdog_may_start_only_the_verification_workflow() -> None:
    statements = [
        s["Fn::If"][1] if "Fn::If" in s else s
        for s in FUNCTIONS["WatchdogFunction"]["Properties"]["Policies"][0]["Statement"]
    ]
    (start,) = [s for s in statements if s["Action"] == "states:StartExecution"]
    assert start["Resource"] == {"Ref": "FailoverVerificationStateMachine"}
    actions = json.dumps([s["Action"] for s in statements])
    assert "*" not in actions


def test_every_sample_event_is_used_by_a_test() -> None:
    tests = "\n".join(path.read_text() for path in (ROOT / "tests").rglob("test_*.py"))
    unused = [p.name for p in EVENTS.glob("*.json") if p.name != "env.json" and p.name not in tests]
    assert unused == []


def test_outputs_name_the_resources_operators_need() -> None:
    assert {
        "FailoverVerificationStateMachineArn",
        "NotificationTopicArn",
        "SlurmFailoverTopicArn",
        "StateTableName",
        "IdempotencyTableName",
        "ControllerStatusDeadLetterQueueUrl",
        "HyperPodEventDeadLetterQueueUrl",
    } <= set(TEMPLATE["Outputs"])


def test_the_definition_file_is_the_one_the_template_names() -> None:
    machine = TEMPLATE["Resources"]["FailoverVerificationStateMachine"]["Properties"]
    assert Path(ROOT / machine["DefinitionUri"]) == ASL
    used = set(re.findall(r"\$\{(\w+)\}", ASL.read_text()))
    assert used == set(machine["DefinitionSubstitutions"])


def test_the_master_secret_is_optional_narrow_and_readable_only_when_set() -> None:
    parameter = TEMPLATE["Parameters"]["MasterSecretArn"]
    pattern = parameter["AllowedPattern"]
    assert parameter["Default"] == ""
    for admitted in ("", "arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!db-0a1b2c3d-4e5f-AbCdEf"):
        assert re.fullmatch(pattern, admitted)
    for refused in ("*", "arn:aws:secretsmanager:us-east-1:123456789012:secret:*", "master", "x;reboot"):
        assert not re.fullmatch(pattern, refused), refused
    function = FUNCTIONS["RotateDbSecretFunction"]["Properties"]
    assert function["Environment"]["Variables"]["MASTER_SECRET_ARN"] == {"Ref": "MasterSecretArn"}
    statements = function["Policies"][0]["Statement"]
    (conditional,) = [
        s
        for s in statements
        if "Fn::If" in s and s["Fn::If"][1].get("Resource") == {"Ref": "MasterSecretArn"}
    ]
    condition, granted, otherwise = conditional["Fn::If"]
    assert TEMPLATE["Conditions"][condition] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "MasterSecretArn"}, ""]}]
    }
    assert granted == {
        "Effect": "Allow",
        "Action": "secretsmanager:GetSecretValue",
        "Resource": {"Ref": "MasterSecretArn"},
    }
    assert otherwise == {"Ref": "AWS::NoValue"}


def test_rotation_is_single_user_and_unscheduled_unless_asked() -> None:
    parameters = TEMPLATE["Parameters"]
    strategy, days = parameters["RotationStrategy"], parameters["RotationDays"]
    assert strategy["Default"] == "single"
    assert sorted(strategy["AllowedValues"]) == ["alternating", "single"]
    assert (days["Default"], days["MinValue"], days["MaxValue"]) == (0, 0, 365)
    assert TEMPLATE["Conditions"]["RotationScheduled"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "RotationDays"}, 0]}]
    }
    resources = TEMPLATE["Resources"].items()
    schedules = [k for k, v in resources if v["Type"] == "AWS::SecretsManager::RotationSchedule"]
    assert schedules == ["DbSecretRotationSchedule"]
    schedule = TEMPLATE["Resources"]["DbSecretRotationSchedule"]
    assert schedule["Condition"] == "RotationScheduled"
    expression = schedule["Properties"]["RotationRules"]["ScheduleExpression"]
    assert expression == {"Fn::Sub": "rate(${RotationDays} days)"}
    variables = FUNCTIONS["RotateDbSecretFunction"]["Properties"]["Environment"]["Variables"]
    assert variables["ROTATION_STRATEGY"] == {"Ref": "RotationStrategy"}
