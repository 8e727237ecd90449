"""State machine definitions parsed once per process, not at every CreateStateMachine and every
StartExecution: moto's interpreter parses the ASL with ANTLR's Python runtime each time (about
0.1 s per definition warm, far more cold), and the embedded stack creates the same three
definitions for every test and starts many executions of each.

Only the syntax tree is kept: it is read-only once parsed. The evaluation components built
from it hold an execution's progress, so each parse still gets its own, from moto's
preprocessor; CreateStateMachine only validates, and a definition parsed once is valid.
Patched while the embedded AWS exists (``embedded_aws``)."""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any
from unittest import mock

# A handful of definitions per stack; the bound keeps a long session's memory flat.
_MAX_DEFINITIONS = 32
_trees: OrderedDict[str, Any] = OrderedDict()
_lock = threading.Lock()


@contextlib.contextmanager
def patched() -> Iterator[None]:
    from moto.stepfunctions.parser.asl.parse import asl_parser
    from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor
    from moto.stepfunctions.parser.models import StepFunctionsParserBackend

    moto_parse = asl_parser.AmazonStateLanguageParser.parse
    moto_validate = StepFunctionsParserBackend._validate_definition

    def validate(definition: str) -> None:
        with _lock:
            if definition in _trees:
                return
        moto_validate(definition)

    def parse(definition: str) -> tuple[Any, Any]:
        with _lock:
            tree = _trees.get(definition)
            if tree is not None:
                _trees.move_to_end(definition)
        if tree is None:
            # A definition with a syntax error raises here, every time: errors are not kept.
            program, tree = moto_parse(definition)
            with _lock:
                _trees[definition] = tree
                while len(_trees) > _MAX_DEFINITIONS:
                    _trees.popitem(last=False)
            return program, tree
        return Preprocessor().visit(tree), tree

    with (
        mock.patch.object(asl_parser.AmazonStateLanguageParser, "parse", staticmethod(parse)),
        mock.patch.object(StepFunctionsParserBackend, "_validate_definition", staticmethod(validate)),
    ):
        yield
