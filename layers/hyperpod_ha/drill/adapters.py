"""What a drill touches in AWS and on the controllers, each behind a small class."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.commands import CommandError, CommandRequest, CommandRunner
from hyperpod_ha.drill.node import (
    NodeOutput,
    jobs_parameters,
    parse_node_output,
    takeover_parameters,
)
from hyperpod_ha.errors import HyperpodHaError
from hyperpod_ha.incidents.keys import CATEGORY, SOURCE
from hyperpod_ha.incidents.ops_item import ops_item_tags
from hyperpod_ha.lease import Lease
from hyperpod_ha.redaction import scrub_text
from hyperpod_ha.state_table import put_lease, read_lease, release_lease
from hyperpod_ha.topic_messages import bounded_body

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_ssm import SSMClient


class DrillCommandFailed(HyperpodHaError):
    """A drill command could not run, or Slurm refused it; the drill fails with this reason."""


@dataclass(frozen=True)
class DrillLease:
    """The cluster's verification lease, held by a drill for its whole run.

    Same item as :class:`~hyperpod_ha.runs.verification_runs.VerificationRuns` writes, so a trigger
    during the drill joins it; ``execution_arn`` names the drill's execution for them.
    """

    dynamodb: DynamoDBClient
    table: str
    lease_seconds: int
    clock: Callable[[], float] = time.time

    def take(self, cluster: str, lease_id: str, execution_arn: str) -> Lease | None:
        """``None`` when taken (now or by this drill before); otherwise the holder's lease."""
        lease = Lease.for_drill(lease_id, execution_arn, int(self.clock()), self.lease_seconds)
        # This drill's own lease may be taken again (a retried step).
        return put_lease(self.dynamodb, self.table, cluster, lease, retake=True)

    def joined(self, cluster: str, lease_id: str) -> int:
        """How many triggers joined the drill while it held the lease."""
        lease = read_lease(self.dynamodb, self.table, cluster)
        return lease.joined_count if lease is not None and lease.lease_id == lease_id else 0

    def release(self, cluster: str, lease_id: str) -> bool:
        return release_lease(self.dynamodb, self.table, cluster, lease_id)


@dataclass(frozen=True)
class NodeCommands:
    """The drill's three Session documents, run through the stack's command transport."""

    runner: CommandRunner
    takeover_document: str
    jobs_document: str
    accounting_document: str
    deadline_seconds: float

    def takeover(self, target: str, index: int) -> NodeOutput:
        return self._run(target, self.takeover_document, takeover_parameters(index))

    def jobs(self, target: str, job_ids: list[str]) -> NodeOutput:
        return self._run(target, self.jobs_document, jobs_parameters("list", job_ids))

    def submit(self, target: str) -> NodeOutput:
        return self._run(target, self.jobs_document, jobs_parameters("submit"))

    def register(self, target: str) -> NodeOutput:
        return self._run(target, self.accounting_document, {})

    def _run(self, target: str, document: str, parameters: dict[str, list[str]]) -> NodeOutput:
        request = CommandRequest(target, document, self.deadline_seconds, parameters)
        try:
            result = self.runner.run(request)
        except CommandError as error:
            raise DrillCommandFailed(f"{type(error).__name__}: {error.reason}") from error
        try:
            output = parse_node_output(result.stdout)
        except ValueError as error:
            raise DrillCommandFailed(f"{error}; exit code {result.exit_code}") from error
        return output


@dataclass(frozen=True)
class DrillRecords:
    """The drill on record: a plain-text summary to the topic, a resolved OpsItem."""

    ssm: SSMClient
    sns: SNSClient
    topic_arn: str | None

    def notify(self, subject: str, body: str) -> str | None:
        if not self.topic_arn:
            return None
        answer = self.sns.publish(
            TopicArn=self.topic_arn,
            Subject=scrub_text(subject)[:99],
            Message=bounded_body([scrub_text(body)]),  # every reason is in it: kept within SNS's limit
        )
        return answer["MessageId"]

    def record(self, cluster: str, execution_id: str, title: str, body: str, data: Mapping[str, str]) -> str:
        """A resolved OpsItem for this drill (one per execution, also when retried)."""
        dedup = f"{SOURCE}:{cluster}:drill:{hashlib.sha256(execution_id.encode()).hexdigest()[:16]}"
        operational: dict[str, Any] = {
            "/aws/dedup": {"Type": "SearchableString", "Value": f'{{"dedupString": "{dedup}"}}'},
            "hyperpod-ha:cluster": {"Type": "SearchableString", "Value": cluster},
            "hyperpod-ha:kind": {"Type": "SearchableString", "Value": "drill"},
            "hyperpod-ha:execution": {"Type": "SearchableString", "Value": execution_id},
            **{
                f"hyperpod-ha:{key}": {"Type": "String", "Value": scrub_text(value)[:4000]}
                for key, value in data.items()
            },
        }
        try:
            ops_item_id = self.ssm.create_ops_item(
                Title=scrub_text(title)[:1024],
                Description=scrub_text(body)[:2048],
                Source=SOURCE,
                Category=CATEGORY,
                Severity="4",
                OperationalData=operational,
                # Without them IAM refuses the create (and could not let us resolve it).
                Tags=ops_item_tags(cluster),
            )["OpsItemId"]
        except ClientError as error:
            # A retried step: the first attempt created it and stopped before resolving it.
            existing = error.response.get("OpsItemId")
            if error_code(error) != "OpsItemAlreadyExistsException" or not existing:
                raise
            ops_item_id = str(existing)
        self.ssm.update_ops_item(OpsItemId=ops_item_id, Status="Resolved")
        return ops_item_id
