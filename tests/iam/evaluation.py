"""IAM's decision on every call a function of the embedded stack made, against its role as the
stack created it (moto's IAM holds the template's policies, every value resolved) and the resource
policies of what it called (the topic's, the queue's, the KMS key's).

A call denied fails the test that made it, naming the function, the request and the statement
that would allow it if any does in another role; an operation not in ``requests.OPERATIONS`` fails
it too. An allow that holds only because a condition key was absent (``...IfExists``,
``ForAllValues``) is reported, not failed: :data:`ABSENT_KEY_ALLOWS`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hyperpod_ha_dev.embedded.account import ACCOUNT
from tests.iam.evaluator import simulate
from tests.iam.recording import Call
from tests.iam.requests import Request

# (function, action, condition key) of allows that held only because the key was absent.
ABSENT_KEY_ALLOWS: set[tuple[str, str, str]] = set()


@dataclass(frozen=True)
class Role:
    name: str
    arn: str
    id: str
    policies: list[dict[str, Any]]


def role_of(stack: Any, function: str) -> Role:
    from moto.iam.models import iam_backends

    name = stack.resources[f"{function}Role"].ref
    role = iam_backends[ACCOUNT]["global"].get_role(name)
    policies = [
        {"name": policy_name, "policy": json.loads(document) if isinstance(document, str) else document}
        for policy_name, document in role.policies.items()
    ]
    return Role(role.name, role.arn, role.id, policies)


def resource_policy(request: Request) -> dict[str, Any] | None:
    """The policy of the resource the request names, as the embedded stack holds it."""
    service = request.resource.split(":")[2] if request.resource.startswith("arn:") else ""
    _, _, _, region, _, rest = (request.resource.split(":", 5) + [""] * 6)[:6]
    policy: Any = None
    if service == "sns":
        from moto.sns.models import sns_backends

        topic = sns_backends[ACCOUNT][region].topics.get(request.resource)
        policy = topic._policy_json if topic is not None else None
    elif service == "sqs":
        from moto.sqs.models import sqs_backends

        queue = sqs_backends[ACCOUNT][region].queues.get(rest)
        policy = queue.policy if queue is not None else None
    elif service == "kms":
        from moto.kms.models import kms_backends

        key = kms_backends[ACCOUNT][region].keys.get(rest.removeprefix("key/"))
        policy = key.policy if key is not None else None
    if isinstance(policy, str):
        policy = json.loads(policy) if policy else None
    return policy or None


def implied(request: Request) -> list[Request]:
    """What a call makes KMS do on the caller's behalf: publishing to an encrypted topic."""
    if request.action != "sns:Publish":
        return []
    from moto.sns.models import sns_backends

    region = request.resource.split(":")[3]
    topic = sns_backends[ACCOUNT][region].topics.get(request.resource)
    key = getattr(topic, "kms_master_key_id", None)
    if not key:
        return []
    if not key.startswith("arn:"):
        key = f"arn:aws:kms:{region}:{ACCOUNT}:key/{key}"
    return [Request("kms:GenerateDataKey", key), Request("kms:Decrypt", key)]


def _absent_key_allows(answer: dict[str, Any], request: Request, role: Role) -> list[str]:
    found = []
    allowing = set(answer.get("allowing") or [])
    for policy in role.policies:
        for statement in policy["policy"]["Statement"]:
            if statement.get("Sid") not in allowing:
                continue
            for operator, tests in (statement.get("Condition") or {}).items():
                if operator.endswith("IfExists") or operator.startswith("ForAllValues:"):
                    found += [key for key in tests if key not in request.context]
    return found


def evaluate(calls: list[Call], stack: Any) -> list[str]:
    """Every problem IAM would have with ``calls`` (empty: all allowed)."""
    problems: list[str] = []
    roles: dict[str, Role] = {}
    for call in calls:
        if isinstance(call.requests, str):
            problems.append(
                f"{call.function}: {call.prefix}:{call.operation} has no IAM mapping ({call.requests})"
            )
            continue
        role = roles.get(call.function) or roles.setdefault(call.function, role_of(stack, call.function))
        userid = f"{role.id}:{call.function_name}"
        caller = {"aws:userid": userid, "aws:PrincipalArn": role.arn, "aws:PrincipalAccount": ACCOUNT}
        for request in [*call.requests, *[i for r in call.requests for i in implied(r)]]:
            context = {k: (userid if v == "${aws:userid}" else v) for k, v in request.context.items()}
            simulation: dict[str, Any] = {
                "request": {
                    "principal": f"arn:aws:sts::{ACCOUNT}:assumed-role/{role.name}/{call.function_name}",
                    "action": request.action,
                    "resource": {"resource": request.resource, "accountId": ACCOUNT},
                    "contextVariables": {**caller, **context},
                },
                "identityPolicies": role.policies,
                "serviceControlPolicies": [],
                "resourceControlPolicies": [],
            }
            policy = resource_policy(request)
            if policy is not None:
                simulation["resourcePolicy"] = policy
            answer = simulate(simulation)
            if answer["result"] != "Allowed":
                problems.append(
                    f"{call.function} ({role.name}): {request.action} on {request.resource} with "
                    f"{json.dumps(context, sort_keys=True)}: {answer['result']}"
                    + (f" {answer.get('errors')}" if answer.get("errors") else "")
                    + (f"; resource policy: {answer.get('resourcePolicy')}" if policy is not None else "")
                )
                continue
            for key in _absent_key_allows(answer, request, role):
                ABSENT_KEY_ALLOWS.add((call.function, request.action, key))
    return problems
