"""The accounting database as discovery reads it (DescribeCluster's Orchestrator.Slurm),
passed on by the real state machine to the run's status record and shown by `hyperpod-ha
status`, in both modes."""

from __future__ import annotations

import json

import boto3
import pytest

from hyperpod_ha_cli.status import cluster_status, render
from hyperpod_ha_dev.simulation.engine import simulated_run
from hyperpod_ha_dev.simulation.scenarios import SCENARIOS
from tests.conftest import ROOT

pytestmark = pytest.mark.slow
SAMPLES = ROOT / "tests" / "fixtures" / "describe_cluster"


@pytest.mark.parametrize("sample", ["external_accounting", "internal_accounting"])
def test_the_status_shows_the_accounting_mode_the_run_found(sample: str) -> None:
    scenario = SCENARIOS["healthy"]
    orchestrator = json.loads((SAMPLES / f"{sample}.json").read_text())["Orchestrator"]
    with simulated_run(scenario, ROOT) as run:
        run.site.set_orchestrator(orchestrator)
        boto3.client("stepfunctions").start_execution(
            stateMachineArn=run.stack.outputs["FailoverVerificationStateMachineArn"],
            input=json.dumps({"cluster": run.site.cluster_name}),
        )
        result = run.finish(scenario)
        status = cluster_status(run.stack.outputs, run.site.cluster_name)
    assert result.verdict == "HEALTHY"
    accounting = status["last_verdict"]["accounting"]
    text = render(status)
    if sample == "external_accounting":
        assert accounting == {
            "mode": "external",
            "config_strategy": "Managed",
            "database": {
                "endpoint": "slurm-accounting.cluster-c0ffee.us-east-1.rds.amazonaws.com",
                "port": 3306,
                "name": "slurm_acct_db",
                "secret_arn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:slurm-accounting-AbCdEf",
            },
        }
        assert "accounting database: external slurm-accounting.cluster-c0ffee" in text
        assert "this stack does not rotate it" in text
    else:
        assert accounting == {"mode": "internal", "config_strategy": "Managed"}
        assert "accounting database: internal" in text
