"""The ``world`` fixture of the incident tests."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from tests.conftest import subscribed_inbox
from tests.unit.incidents.cases.incident_world import REGION, STATE_TABLE, World


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws():
        topic = boto3.client("sns").create_topic(Name="hyperpod-ha")["TopicArn"]
        queue = subscribed_inbox(topic)
        boto3.client("dynamodb").create_table(
            TableName=STATE_TABLE,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        ssm = boto3.client("ssm")
        im = boto3.client("ssm-incidents")
        with Stubber(ssm) as ssm_stub, Stubber(im) as im_stub:
            yield World(ssm, ssm_stub, im, im_stub, topic, queue)
            ssm_stub.assert_no_pending_responses()
            im_stub.assert_no_pending_responses()
