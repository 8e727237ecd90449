"""AWS::CloudWatch::Alarm. moto 5.2.5 has no CloudFormation model for it (its CloudWatch has
PutMetricAlarm): its CloudFormation skipped every alarm with a warning. CloudFormation passes an
alarm's properties to PutMetricAlarm under the same names, and so does this shim."""

from __future__ import annotations

from typing import Any

from hyperpod_ha_dev.embedded.shims.model import Shim, client


class Alarm(Shim):
    TYPE = "AWS::CloudWatch::Alarm"
    NAME = "AlarmName"

    @classmethod
    def create(cls, name: str, properties: dict[str, Any], account: str, region: str) -> Shim:
        client("cloudwatch", region).put_metric_alarm(**{**properties, "AlarmName": name})
        # CloudWatch's alarm ARN is made of these (no DescribeAlarms per alarm: a stack has dozens).
        return cls(name, properties, Arn=f"arn:aws:cloudwatch:{region}:{account}:alarm:{name}")
