"""AWS::Scheduler::Schedule. moto 5.2.5 has no CloudFormation model for it (its Scheduler has
CreateSchedule, and never fires a schedule: ``EmbeddedStack.tick`` delivers one tick). The
properties are CreateSchedule's, under the same names."""

from __future__ import annotations

from typing import Any

from hyperpod_ha_dev.embedded.shims.model import Shim, client


class Schedule(Shim):
    TYPE = "AWS::Scheduler::Schedule"
    NAME = "Name"

    @classmethod
    def create(cls, name: str, properties: dict[str, Any], account: str, region: str) -> Shim:
        arn = client("scheduler", region).create_schedule(**{**properties, "Name": name})["ScheduleArn"]
        return cls(name, properties, Arn=arn)
