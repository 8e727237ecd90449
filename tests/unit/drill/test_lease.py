"""The drill's hold on the cluster's lease: taken once, taken again by the same drill (a
retried step), refused while another run holds it, free again once that lease expired."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha.drill.lease import DrillLease

TABLE = "state"
ARN = "arn:aws:states:us-east-1:123456789012:execution:drills:drill-1"


@pytest.fixture
def dynamodb() -> Iterator[object]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield client


def test_the_same_drill_takes_its_lease_again_and_another_is_refused(dynamodb: object) -> None:
    now = [1_000.0]
    lease = DrillLease(dynamodb, TABLE, 60, clock=lambda: now[0])  # type: ignore[arg-type]
    assert lease.take("ml-cluster", "drill-a", ARN) is None
    assert lease.take("ml-cluster", "drill-a", ARN) is None  # a retried step
    holder = lease.take("ml-cluster", "drill-b", ARN.replace("drill-1", "drill-2"))
    assert holder is not None
    assert holder.lease_id == "drill-a"
    now[0] += 61  # drill-a's lease expired
    assert lease.take("ml-cluster", "drill-b", ARN.replace("drill-1", "drill-2")) is None
    assert lease.release("ml-cluster", "drill-a") is False
    assert lease.release("ml-cluster", "drill-b") is True
