"""The benchmark's measuring logic: medians and ratios, ``-X importtime``, the functions measured, sizes.

Nothing here is timed; the measurements themselves run with ``make bench``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bench import ROOT
from bench.__main__ import build_stale
from bench.import_time import ImportLine, parse_importtime, top_imports
from bench.lambda_functions import layer_ids, placeholder_parameters, template_functions
from bench.package_size import extension_architectures, runtime_provided, zipped_size
from bench.stats import NoSamples, at_most, human_bytes, median, median_ratio, ratio
from hyperpod_ha_stack.template import load_template

# --- stats ---------------------------------------------------------------------------------


def test_median_and_ratio_of_medians() -> None:
    assert median([5.0, 1.0, 3.0]) == 3.0
    assert median([1.0, 2.0, 3.0, 10.0]) == 2.5
    # Not the median of paired ratios: the runs are interleaved, not paired.
    assert median_ratio([300.0, 310.0, 900.0], [200.0, 100.0, 200.0]) == 1.55
    assert ratio(1.0, 3.0) == 0.33


def test_no_samples_or_no_baseline_is_an_error() -> None:
    with pytest.raises(NoSamples):
        median([])
    with pytest.raises(NoSamples):
        ratio(1.0, 0.0)


def test_a_check_says_whether_its_target_is_met() -> None:
    assert at_most(1.3, 1.3) == {"value": 1.3, "target": 1.3, "met": True}
    missed = at_most(2.0, 1.3, "too slow", samples=7)
    assert missed == {"value": 2.0, "target": 1.3, "met": False, "note": "too slow", "samples": 7}


def test_sizes_read_in_binary_units() -> None:
    assert human_bytes(100) == "100 B"
    assert human_bytes(1536) == "1.5 KiB"
    assert human_bytes(15 * 1024 * 1024) == "15.0 MiB"


# --- cold start ------------------------------------------------------------------------------

IMPORTTIME = """\
import time: self [us] | cumulative | imported package
import time:       120 |        120 |   _io
import time:      3000 |      90000 | app
import time:       500 |      60000 |   hyperpod_ha.observability
import time:     40000 |      59500 |     aws_xray_sdk.core
something else on stderr
"""


def test_importtime_lines_are_parsed_with_their_depth() -> None:
    lines = parse_importtime(IMPORTTIME)

    assert lines == [
        ImportLine("_io", 120, 120, 1),
        ImportLine("app", 3000, 90000, 0),
        ImportLine("hyperpod_ha.observability", 500, 60000, 1),
        ImportLine("aws_xray_sdk.core", 40000, 59500, 2),
    ]


def test_top_imports_rank_by_median_cumulative_time() -> None:
    fast = parse_importtime(IMPORTTIME.replace("90000 | app", "80000 | app").replace("59500 |", "70000 |"))
    slow = parse_importtime(IMPORTTIME.replace("59500 |", "99500 |"))

    ranked = top_imports([parse_importtime(IMPORTTIME), fast, slow], count=2)

    # aws_xray_sdk.core: 59.5, 70 and 99.5 ms, median 70, above the observability module's 60.
    assert [item["module"] for item in ranked] == ["app", "aws_xray_sdk.core"]
    assert ranked[0]["cumulative_ms"] == 90.0  # median of 90, 80, 90 ms
    assert ranked[1] == {"module": "aws_xray_sdk.core", "cumulative_ms": 70.0, "self_ms": 40.0, "depth": 2}


def test_every_template_function_is_measured_with_its_environment() -> None:
    template = load_template(ROOT / "template.yaml")
    declared = {
        name
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }

    functions = {function.logical_id: function for function in template_functions(ROOT)}

    assert set(functions) == declared
    for function in functions.values():
        assert all(isinstance(value, str) for value in function.environment.values())
        assert function.environment["POWERTOOLS_SERVICE_NAME"] == "hyperpod-ha"  # Globals merged
        assert function.module == "app"
    node_event = functions["HyperPodEventFunction"].environment
    assert node_event["NOTIFICATION_TOPIC_ARN"].startswith("arn:aws:sns:us-east-1:")
    assert node_event["STATE_TABLE"].endswith("-StateTable")
    assert layer_ids(ROOT) == ["HyperpodHaLayer"]


def test_parameters_without_default_get_placeholders_of_their_type() -> None:
    template = {
        "Parameters": {
            "ClusterName": {"Type": "String"},
            "Subnets": {"Type": "List<AWS::EC2::Subnet::Id>"},
            "Port": {"Type": "Number"},
            "Other": {"Type": "String"},
            "Level": {"Type": "String", "Default": "INFO"},
        }
    }

    values = placeholder_parameters(template)

    assert values == {
        "ClusterName": "ml-cluster",
        "Subnets": ["placeholder-subnets"],
        "Port": 0,
        "Other": "placeholder-other",
        "Level": "INFO",
    }


# --- package size ----------------------------------------------------------------------------


def test_what_the_runtime_provides_is_recognised() -> None:
    names = [
        "boto3",
        "botocore-1.43.0.dist-info",
        "six.py",
        "dateutil",
        "aws_lambda_powertools",
        "sixer",
        "pymysql",
    ]

    assert runtime_provided(names) == ["boto3", "botocore-1.43.0.dist-info", "dateutil", "six.py"]


def test_extension_architectures_are_read_from_their_names() -> None:
    paths = [
        Path("wrapt/_wrappers.cpython-313-aarch64-linux-gnu.so"),
        Path("speedups.cpython-313-x86_64-linux-gnu.so"),
        Path("odd.so"),
        Path("module.py"),
    ]

    assert extension_architectures(paths) == {
        "_wrappers.cpython-313-aarch64-linux-gnu.so": "aarch64",
        "speedups.cpython-313-x86_64-linux-gnu.so": "x86_64",
        "odd.so": "unknown",
    }


def test_the_zip_is_deflated_and_holds_every_file(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "app.py").write_text("x = 1\n" * 2000)
    one_file = zipped_size(tmp_path)
    (tmp_path / "pkg" / "data.json").write_text(json.dumps({"key": list(range(500))}))

    assert 0 < one_file < 2000 * len("x = 1\n") / 10  # deflated
    assert zipped_size(tmp_path) > one_file + 100


def test_a_build_older_than_its_sources_is_stale(tmp_path: Path) -> None:
    for relative in ("template.yaml", "functions/a/app.py", "layers/hyperpod_ha/x.py", "build/template.yaml"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("x")
    os.utime(tmp_path / "build" / "template.yaml", (1_000_000, 2_000_000))
    assert build_stale(tmp_path / "build", tmp_path)
    os.utime(tmp_path / "build" / "template.yaml")
    assert not build_stale(tmp_path / "build", tmp_path)
    assert build_stale(tmp_path / "missing", tmp_path)
