"""Reading AWS API errors: the one place that knows where botocore keeps an error's code."""

from __future__ import annotations

from botocore.exceptions import ClientError

CONDITION_FAILED = "ConditionalCheckFailedException"
"""DynamoDB: a conditional write found the item in another state."""


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", "Unknown"))
