"""An execution's hold on the cluster's lease (a drill's, a restore's): taken once, taken again
by the same execution (a retried step), refused while another holds it, free again once that
lease expired; and the re-check before acting."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha.acting.execution_lease import ExecutionLease
from hyperpod_ha.lease import lease_id_for_drill

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
    lease = ExecutionLease(dynamodb, TABLE, 60, "drill", clock=lambda: now[0])  # type: ignore[arg-type]
    other = ARN.replace("drill-1", "drill-2")
    assert lease.begin("ml-cluster", ARN) == {
        "taken": True,
        "lease_id": lease_id_for_drill(ARN),
        "reason": None,
    }
    assert lease.take("ml-cluster", ARN) is None  # a retried step
    refused = lease.begin("ml-cluster", other, refused="not drilled: ")
    assert refused == {
        "taken": False,
        "lease_id": lease_id_for_drill(other),
        "reason": f"not drilled: a drill holds the cluster now: {ARN}",
        "holder": ARN,
    }
    now[0] += 61  # the first drill's lease expired
    assert lease.take("ml-cluster", other) is None
    assert lease.release("ml-cluster", lease_id_for_drill(ARN)) is False
    assert lease.release("ml-cluster", lease_id_for_drill(other)) is True


def test_a_step_acts_only_for_the_holder_and_on_a_controller_discovered_now(dynamodb: object) -> None:
    from hyperpod_ha.restore.errors import RestoreStepRefused
    from tests.unit.drill.cases.own_cluster import discovered
    from tests.unit.drill.test_rules import CTL1, CTL2

    restores = ExecutionLease(dynamodb, TABLE, 60, "restore")  # type: ignore[arg-type]
    drills = ExecutionLease(dynamodb, TABLE, 60, "drill")  # type: ignore[arg-type]
    found = discovered(CTL1, CTL2)
    node = (CTL2.instance_id, CTL2.target)

    def own(lease: ExecutionLease, execution: str, at: tuple[str, str | None] = node) -> str:
        return lease.own_controller(
            "ml-cluster", execution, found, at, refused=RestoreStepRefused, what="no: "
        ).target

    with pytest.raises(RestoreStepRefused, match=r"^no: this restore does not hold the cluster's lease"):
        own(restores, ARN)  # nobody holds it
    assert drills.take("ml-cluster", ARN) is None
    with pytest.raises(RestoreStepRefused, match="does not hold"):
        own(restores, ARN)  # a drill of the same ARN holds it: another kind, another lease
    assert own(drills, ARN) == CTL2.target
    with pytest.raises(RestoreStepRefused, match="not a controller of this stack's cluster"):
        own(drills, ARN, ("i-9", None))
    with pytest.raises(RestoreStepRefused, match="not the one discovery found"):
        own(drills, ARN, (CTL2.instance_id, "sagemaker-cluster:other_controller-machine-i-2"))


def test_a_run_hands_its_lease_to_a_restore_and_to_no_other(dynamodb: object) -> None:
    from hyperpod_ha.acting.execution_lease import HandedLease
    from hyperpod_ha.lease import Lease
    from hyperpod_ha.state_table import put_lease, read_lease

    restore = ARN.replace("drills:drill-1", "restores:restore-1")
    restores = ExecutionLease(dynamodb, TABLE, 60, "restore", clock=lambda: 1_000.0)  # type: ignore[arg-type]
    run = Lease.for_run("run-lease", "sns:m-1", "run-1", 1_000, 3600)
    assert put_lease(dynamodb, TABLE, "ml-cluster", run) is None  # type: ignore[arg-type]
    # Not handed: the run holds it. Handed by another run, or with another id: refused too.
    for handed in (None, HandedLease("run-lease", "run-2"), HandedLease("other", "run-1")):
        holder = restores.take("ml-cluster", restore, handed)
        assert holder is not None
        assert holder.lease_id == "run-lease"
    taken = restores.begin("ml-cluster", restore, handed=HandedLease("run-lease", "run-1"))
    assert (taken["taken"], taken["handed_from"]) == (True, "run-1")
    held = read_lease(dynamodb, TABLE, "ml-cluster")  # type: ignore[arg-type]
    assert held is not None
    assert (held.kind, held.execution_arn, held.handed_from) == ("restore", restore, "run-1")
    # A drill's lease is no run's: it is never handed over, whatever the request says.
    drills = ExecutionLease(dynamodb, TABLE, 60, "drill", clock=lambda: 1_000.0)  # type: ignore[arg-type]
    assert drills.take("ml-cluster", ARN, HandedLease(held.lease_id, held.execution_name)) is not None
