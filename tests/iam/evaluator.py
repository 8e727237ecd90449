"""IAM's evaluation, asked of ``@cloud-copilot/iam-simulate`` (``tests/iam/evaluate.mjs``, installed
by ``make venv`` with ``npm ci``: a development tool only, pinned by ``package-lock.json``).

One Node process per test process, kept for the session; answers are cached (the suite asks the
same questions many times)."""

from __future__ import annotations

import atexit
import json
import shutil
import subprocess
import threading
from functools import cache
from typing import Any

from tests.conftest import ROOT

HERE = ROOT / "tests" / "iam"


class EvaluatorMissing(RuntimeError):
    """Node or the pinned evaluator is not installed (``make venv`` installs it)."""


class _Evaluator:
    def __init__(self) -> None:
        node = shutil.which("node")
        if node is None or not (HERE / "node_modules" / "@cloud-copilot" / "iam-simulate").is_dir():
            raise EvaluatorMissing("IAM's evaluator is not installed: run `make venv` (npm ci in tests/iam)")
        self._process = subprocess.Popen(
            [node, str(HERE / "evaluate.mjs")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=HERE,
        )
        self._lock = threading.Lock()
        atexit.register(self._process.kill)

    def ask(self, question: dict[str, Any]) -> dict[str, Any]:
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        with self._lock:
            self._process.stdin.write(json.dumps(question) + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        if not line:
            raise RuntimeError("IAM's evaluator stopped")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"IAM's evaluator failed: {answer['error']}")
        return answer


@cache
def evaluator() -> _Evaluator:
    return _Evaluator()


_answers: dict[str, dict[str, Any]] = {}


def simulate(simulation: dict[str, Any]) -> dict[str, Any]:
    key = json.dumps(simulation, sort_keys=True)
    if key not in _answers:
        _answers[key] = evaluator().ask({"simulate": simulation})
    return _answers[key]


@cache
def condition_keys(action: str) -> tuple[bool, frozenset[str]]:
    """(whether the action exists, the condition keys it and its resource types support); for
    ``service:*``, every key of the service."""
    service, _, name = action.partition(":")
    if name == "*":
        return True, frozenset(evaluator().ask({"serviceKeys": service})["keys"])
    answer = evaluator().ask({"conditionKeys": action})
    return bool(answer["exists"]), frozenset(answer["keys"]) | frozenset(answer["resourceKeys"])


@cache
def global_condition_keys() -> frozenset[str]:
    return frozenset(evaluator().ask({"globalKeys": True})["keys"])
