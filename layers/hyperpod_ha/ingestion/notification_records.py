"""The SNS notifications' records (Powertools idempotency, DynamoDB): each notification's answer
written once, after its work, and read back for a redelivery of its MessageId.

Powertools' DynamoDB layer writes a record twice: IN_PROGRESS before the work (so that two
deliveries of one message never do it both) and COMPLETED after it. The work here needs no such
lock: starting or joining the cluster's run is idempotent by itself (a run's lease id and
execution name follow from the trigger, StartExecution of the same name and input is answered
with the same execution, a join is conditional on the trigger not having joined). So this layer
writes only the completed answer, one conditional ``PutItem``; a delivery first reads the record
(a read, not a write) and a redelivery is answered from it ('duplicate') without reaching the
lease. Two deliveries at once both do the (same) work; the first answer written stands.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord
from botocore.exceptions import ClientError

from hyperpod_ha.aws_errors import error_code


class AnswerRecords(DynamoDBPersistenceLayer):
    """Powertools' DynamoDB persistence layer, writing each notification's record once."""

    def _put_record(self, data_record: DataRecord) -> None:
        """Before the work: nothing is written; an answer already recorded is returned."""
        try:
            found = self._get_record(data_record.idempotency_key)
        except IdempotencyItemNotFoundError:
            return
        if not found.is_expired and found.status == "COMPLETED":
            raise IdempotencyItemAlreadyExistsError(old_data_record=found)

    def _update_record(self, data_record: DataRecord) -> None:
        """After the work: the answer, unless another delivery's answer is there already."""
        item: dict[str, Any] = {
            **self._get_key(data_record.idempotency_key),
            self.expiry_attr: {"N": str(data_record.expiry_timestamp)},
            self.status_attr: {"S": data_record.status},
            self.data_attr: {"S": data_record.response_data},
        }
        if self.payload_validation_enabled and data_record.payload_hash:
            item[self.validation_key_attr] = {"S": data_record.payload_hash}
        try:
            self.client.put_item(
                TableName=self.table_name,
                Item=item,
                ConditionExpression="attribute_not_exists(#id) OR #expiry < :now",
                ExpressionAttributeNames={"#id": self.key_attr, "#expiry": self.expiry_attr},
                ExpressionAttributeValues={":now": {"N": str(int(dt.datetime.now().timestamp()))}},
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise

    def _delete_record(self, data_record: DataRecord) -> None:
        """A failed work wrote nothing here: its redelivery does it again."""
