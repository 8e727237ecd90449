"""DynamoDB write calls counted at moto's front door, by action and table (failed conditional
writes apart: DynamoDB bills those too)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

WRITE_ACTIONS: Final = {
    "put_item": "PutItem",
    "update_item": "UpdateItem",
    "delete_item": "DeleteItem",
    "batch_write_item": "BatchWriteItem",
    "transact_write_items": "TransactWriteItems",
}


@dataclass
class WriteCounter:
    """DynamoDB write calls by action and table; failed ones (conditions) counted apart."""

    calls: Counter[tuple[str, str]] = field(default_factory=Counter)
    failed: Counter[tuple[str, str]] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def snapshot(self) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]]]:
        return Counter(self.calls), Counter(self.failed)


def tables_of(action: str, body: Mapping[str, Any]) -> list[str]:
    """The tables one write request touches."""
    if action == "BatchWriteItem":
        return sorted(body.get("RequestItems", {}))
    if action == "TransactWriteItems":
        tables = set()
        for item in body.get("TransactItems", []):
            for operation in item.values():
                if isinstance(operation, Mapping) and "TableName" in operation:
                    tables.add(str(operation["TableName"]))
        return sorted(tables)
    return [str(body.get("TableName", "?"))]


@contextmanager
def counting_dynamodb_writes() -> Iterator[WriteCounter]:
    """Count every write call that reaches moto's DynamoDB, whichever client sent it."""
    from moto.dynamodb.responses import DynamoHandler

    counter = WriteCounter()
    originals = {name: getattr(DynamoHandler, name) for name in WRITE_ACTIONS}

    def counted(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        action = WRITE_ACTIONS[name]

        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            # moto has parsed the request into a dict by the time it calls the action.
            body = self.body if isinstance(self.body, Mapping) else {}
            tables = tables_of(action, body)
            for table in tables:
                counter.calls[(action, table)] += 1
            try:
                return original(self, *args, **kwargs)
            except Exception:
                for table in tables:
                    counter.failed[(action, table)] += 1
                raise

        return wrapper

    for name, original in originals.items():
        setattr(DynamoHandler, name, counted(name, original))
    try:
        yield counter
    finally:
        for name, original in originals.items():
            setattr(DynamoHandler, name, original)


def delta(after: Counter[tuple[str, str]], before: Counter[tuple[str, str]]) -> Counter[tuple[str, str]]:
    return Counter({key: after[key] - before[key] for key in after if after[key] - before[key]})


def by_table(delta: Counter[tuple[str, str]], names: Mapping[str, str]) -> dict[str, dict[str, int]]:
    tables: dict[str, dict[str, int]] = {}
    for (action, table), calls in sorted(delta.items()):
        tables.setdefault(names.get(table, table), {})[action] = calls
    return tables
