"""The instance group of a node, as HyperPodEventFunction looks it up: once per node, and None for
a node that left the cluster."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from hyperpod_ha.ingestion.instance_groups import InstanceGroups


def test_a_nodes_group_is_asked_once() -> None:
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    with Stubber(sagemaker) as stub:
        stub.add_response(
            "describe_cluster_node",
            {"NodeDetails": {"InstanceGroupName": "controller-machine"}},
            {"ClusterName": "ml-cluster", "NodeId": "i-1"},
        )
        groups = InstanceGroups(sagemaker)
        assert groups.group_of("ml-cluster", "i-1") == "controller-machine"
        assert groups.group_of("ml-cluster", "i-1") == "controller-machine"
        stub.assert_no_pending_responses()


@pytest.mark.parametrize("code", ["ResourceNotFound", "ValidationException"])
def test_a_node_that_left_has_no_group(code: str) -> None:
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    with Stubber(sagemaker) as stub:
        stub.add_client_error("describe_cluster_node", service_error_code=code)
        assert InstanceGroups(sagemaker).group_of("ml-cluster", "i-gone") is None


def test_other_errors_are_raised() -> None:
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    with Stubber(sagemaker) as stub:
        stub.add_client_error("describe_cluster_node", service_error_code="ThrottlingException")
        with pytest.raises(ClientError, match="ThrottlingException"):
            InstanceGroups(sagemaker).group_of("ml-cluster", "i-1")
