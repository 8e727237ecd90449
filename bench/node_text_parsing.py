"""Parsing or rejecting hostile node text: the worst time for one parser at its largest input.

What a controller can hand back, as hard as possible for this code: every parser of
:mod:`hyperpod_ha.slurm` at :data:`~hyperpod_ha.slurm.probe_output.MAX_SECTION_CHARS` (the most
:func:`parse_probe_output` gives any section parser, whatever the node printed); the probe
decoding (:func:`parse_probe_output` and the whole report, :func:`report_from_result`, on the
Session Manager output cap of 4 MiB; a report read back from the workflow's state by
``controllers/decoding.py`` at Step Functions' 256 KiB); and the roll-out's node report
(:func:`parse_node_report`) at 4 MiB. The shapes are those that made the old patterns
backtrack or rescan (repeated ``a=``, long inner space runs, repeated ``slurmctld version``),
floods of empty lines, markers and JSON-looking lines, JSON nested beyond any decoder, and
slurmctld's own log line forms (a user's text after a real message start, header near misses).
Each input gives a parsed value or its typed error (an ``InputRejected``); anything else
breaks the measurement. The figure is the slowest input's median, against 50 ms.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Iterator
from typing import Any, Final

from bench.stats import at_most, median
from hyperpod_ha.commands import CommandResult
from hyperpod_ha.commands.session_channel import MAX_OUTPUT_BYTES
from hyperpod_ha.controllers.check import report_from_result
from hyperpod_ha.controllers.models import Controller, ControllerReport
from hyperpod_ha.errors import InputRejected
from hyperpod_ha.rotation.rollout import parse_node_report
from hyperpod_ha.slurm import (
    PROBE_MARK,
    PROBE_RESULT_PREFIX,
    parse_agent_queue_size,
    parse_cluster_registrations,
    parse_conf_change,
    parse_dbd_ping,
    parse_failover_conf,
    parse_heartbeat,
    parse_http_probes,
    parse_hyperpod_hand,
    parse_identity,
    parse_node_states,
    parse_notify_failures,
    parse_ping,
    parse_probe_output,
    parse_role_log,
    parse_services,
    parse_show_config,
    parse_slurm_conf,
    parse_state_save,
)
from hyperpod_ha.slurm.probe_output import MAX_SECTION_CHARS, SECTIONS

TARGET_MS: Final = 50.0
ROUNDS: Final = 5
STATE_BYTES: Final = 256 * 1024  # Step Functions' largest state: what a report is read back from
PARSERS: Final[dict[str, Callable[[str], object]]] = {
    parser.__name__: parser
    for parser in (
        parse_ping,
        parse_show_config,
        parse_slurm_conf,
        parse_role_log,
        parse_services,
        parse_identity,
        parse_heartbeat,
        parse_state_save,
        parse_node_states,
        parse_cluster_registrations,
        parse_dbd_ping,
        parse_agent_queue_size,
        parse_failover_conf,
        parse_http_probes,
        parse_hyperpod_hand,
        parse_conf_change,
        parse_notify_failures,
    )
}
NONCE: Final = "0123456789abcdef"
NODE: Final = Controller.from_json(
    {
        "instance_id": "i-0aaaaaaaaaaaaaaa1",
        "group": "controller-machine",
        "status": "Running",
        "private_ip": "10.214.0.11",
        "hostname": "ip-10-214-0-11",
        "target": "sagemaker-cluster:hplab0000001_controller-machine-i-0aaaaaaaaaaaaaaa1",
    }
)


def _fill(unit: str, size: int, around: tuple[str, str] = ("", "")) -> str:
    """``unit`` repeated so that the text, with ``around``, is just under ``size`` characters."""
    return around[0] + unit * ((size - len(around[0]) - len(around[1])) // len(unit)) + around[1]


def _fill_lines(line: str, size: int) -> str:
    """``line`` (ending in a newline) repeated, then empty lines: exactly ``size`` characters."""
    text = _fill(line, size)
    return text + "\n" * (size - len(text))


def section_texts() -> dict[str, str]:
    """name -> a section's text of :data:`MAX_SECTION_CHARS` characters."""
    size = MAX_SECTION_CHARS
    return {
        "process-facts": _fill("process slurmctld " + "a=" * 36 + " X\n", size),
        "one-process-line": _fill("a=", size, ("process slurmctld ", " X")),
        "conf-inner-spaces": _fill(" ", size, ("path=/etc/slurm/slurm.conf\nClusterName=a", "b # x")),
        "version-words": _fill("slurmctld version ", size),
        "empty-lines": "\n" * size,
        "key-values": _fill("a=b\n", size, ("path=/x\n", "")),
        "one-long-line": _fill("x", size),
        "equals": _fill("=", size),
        "ping-host": _fill("h", size, ("Slurmctld(primary) at ", " is UP")),
        "heartbeat-bytes": _fill("255 ", size, ("bytes=", "")),
        "digits": _fill("9", size, ("DBD Agent queue size: ", "")),
        "sinfo-flags": _fill("*", size, ("idle", " 3")),
        "pipes": _fill("|", size),
        "error-lines": _fill("error: heartbeat file could not be read\n", size),
        # slurmctld's own line forms, which the role log reads whole since issue 35: a user's
        # partition string after a real message start, and near misses of each header.
        "forged-role-lines": _fill_lines(
            "[2026-12-06T08:00:00.000] _get_job_parts: invalid partition specified: "
            "slurmctld running in background mode\n",
            size,
        ),
        "journal-role-lines": _fill_lines(
            "2026-12-06T08:00:00+0000 ctl1 slurmctld[4242]: [2026-12-06T08:00:00.000] "
            "error: ControlMachine ctl1 not responding, BackupController1 ctl2 taking over\n",
            size,
        ),
        "open-brackets": _fill("[" * 63 + "\n", size),
        "journal-header-misses": _fill_lines(
            "2026-12-06T08:00:00 " + "h" * 255 + " slurmctld[" + "9" * 11 + "\n", size
        ),
    }


def _probe(*sections: tuple[str, str], result: str | None = None) -> str:
    out = [f"{PROBE_MARK} probe begin version=1 nonce={NONCE}"]
    for name, text in sections:
        out += [
            f"{PROBE_MARK} {NONCE} begin {name}",
            text,
            f"{PROBE_MARK} {NONCE} end {name} rc=0 ms=1 timed_out=0 truncated=0",
        ]
    if result is not None:
        out.append(PROBE_RESULT_PREFIX + result)
    return "\n".join(out) + "\n"


def probe_outputs() -> dict[str, str]:
    """name -> a probe output of about :data:`MAX_OUTPUT_BYTES` (the Session Manager cap)."""
    size = MAX_OUTPUT_BYTES - 4096
    complete = json.dumps({"version": 1, "nonce": NONCE, "complete": True})
    every = tuple(
        (name, _fill(text[:200] + "\n", size // len(SECTIONS)))
        for name, text in zip(
            SECTIONS,
            section_texts().values(),
            strict=False,
        )
    )
    return {
        "empty-lines": _probe(("role", "\n" * size)),
        "one-huge-section": _probe(
            ("services", _fill("process slurmctld " + "a=" * 36 + " X\n", size)), result=complete
        ),
        "every-section-huge": _probe(*every, result=complete),
        "carriage-returns": _probe(("role", "\r" * size)),
        "one-huge-line": _probe(("role", " " * size)),
        "marker-flood": _fill(f"{PROBE_MARK} {NONCE} begin x\n", size, (_probe(), "")),
        "begin-flood": _fill(f"{PROBE_MARK} probe begin x\n", size),
        "deep-result-line": _probe(result="[" * size),
        "no-begin-line": "\n" * size,
    }


def node_reports() -> dict[str, str]:
    """name -> a roll-out node script's stdout of about :data:`MAX_OUTPUT_BYTES`."""
    size = MAX_OUTPUT_BYTES - 4096
    report = json.dumps({"outcome": "updated", "storage_user": "slurm_clone", "seconds_to_answer": 3.2})
    return {
        "json-looking-lines": _fill("{\n", size),
        "report-after-noise": _fill("{\n", size, ("", report + "\n")),
        "deep-line": "{" + "[" * size,
        "huge-json-line": json.dumps({"outcome": "failed", "reason": "x" * size}),
        "empty-lines": "\n" * size,
    }


def state_reports() -> dict[str, Any]:
    """name -> a report as read back from the workflow's state (at most 256 KiB as JSON)."""
    base = {"instance_id": "i-0aaaaaaaaaaaaaaa1", "status": "CHECKED"}
    deep: Any = "x"
    for _ in range(STATE_BYTES // 8):
        deep = [deep]
    return {
        "long-texts": {**base, "reason": "x" * STATE_BYTES, "notes": ["y" * 1000] * 200},
        "long-lists": {
            **base,
            "ping": {"lines": [{"host": "h", "label": "primary", "responding": True}] * 5_000},
        },
        "many-keys": {**base, **{f"k{i}": i for i in range(20_000)}},
        "deep-where-text-is-wanted": {**base, "reason": deep},
    }


def _outcome(run: Callable[[], object]) -> str:
    try:
        run()
    except InputRejected:
        return "rejected"
    return "parsed"


def cases() -> Iterator[tuple[str, Callable[[], str]]]:
    for text_name, text in section_texts().items():
        for parser_name, parser in PARSERS.items():
            yield (
                f"slurm/{parser_name}/{text_name}",
                functools.partial(_outcome, functools.partial(parser, text)),
            )
    for name, output in probe_outputs().items():
        yield (
            f"probe/parse_probe_output/{name}",
            functools.partial(_outcome, functools.partial(parse_probe_output, output)),
        )
        result = CommandResult(output, "", 0, 1.0, "bench")
        yield (
            f"probe/report_from_result/{name}",
            functools.partial(_outcome, functools.partial(report_from_result, NODE, result)),
        )
    for name, report in state_reports().items():
        yield (
            f"probe/decode/{name}",
            functools.partial(_outcome, functools.partial(ControllerReport.from_json, report)),
        )
    for name, stdout in node_reports().items():
        result = CommandResult(stdout, "", 0, 1.0, "bench")
        yield (
            f"rollout/parse_node_report/{name}",
            functools.partial(_outcome, functools.partial(parse_node_report, result)),
        )


def measure() -> dict[str, Any]:
    per_input: dict[str, dict[str, Any]] = {}
    for name, run in cases():
        samples = []
        outcome = ""
        for _ in range(ROUNDS):
            started = time.perf_counter()
            outcome = run()
            samples.append((time.perf_counter() - started) * 1000)
        per_input[name] = {
            "median_ms": round(median(samples), 3),
            "max_ms": round(max(samples), 3),
            "outcome": outcome,
        }
    slowest = max(per_input, key=lambda n: per_input[n]["median_ms"])
    return {
        "worst": at_most(
            per_input[slowest]["median_ms"],
            TARGET_MS,
            "slowest input's median over the rounds; sections at their cap, outputs at 4 MiB",
            input=slowest,
            rounds=ROUNDS,
        ),
        "inputs": per_input,
    }
