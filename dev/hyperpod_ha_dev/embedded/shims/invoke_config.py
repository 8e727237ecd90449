"""AWS::Lambda::EventInvokeConfig. moto 5.2.5 has no CloudFormation model for it (its Lambda has
PutFunctionEventInvokeConfig): the retries of asynchronous invocations the template sets (the
watchdog's 0) were lost. The properties are the API's, under the same names."""

from __future__ import annotations

from typing import Any

from hyperpod_ha_dev.embedded.shims.model import Shim, client


class EventInvokeConfig(Shim):
    TYPE = "AWS::Lambda::EventInvokeConfig"

    @classmethod
    def create(cls, name: str, properties: dict[str, Any], account: str, region: str) -> Shim:
        client("lambda", region).put_function_event_invoke_config(**properties)
        return cls(f"{properties['FunctionName']}:{properties.get('Qualifier', '$LATEST')}", properties)
