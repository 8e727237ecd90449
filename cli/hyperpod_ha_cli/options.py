"""The values an option may take, each checked before anything is asked of AWS: a usage error in
one line (exit 2) names the bound."""

from __future__ import annotations

import argparse
import functools
import re
from collections.abc import Callable

from hyperpod_ha.request_fields import is_cluster_name

# What a person may type for a duration: 90s, 30m, 2h, 1d, 1h30m.
_DURATION = re.compile(r"(?:(\d{1,4})d)?(?:(\d{1,4})h)?(?:(\d{1,5})m)?(?:(\d{1,6})s)?")
_SHOWN = 80


def shown(value: str) -> str:
    return value if len(value) <= _SHOWN else value[:_SHOWN] + "..."


def cluster_name(value: str) -> str:
    """``--cluster``: a HyperPod cluster's name (the template's ClusterName pattern)."""
    if not is_cluster_name(value):
        raise argparse.ArgumentTypeError(
            f"{shown(value)!r} is not a HyperPod cluster name (1-63 letters, digits and hyphens, "
            "starting and ending with a letter or digit)"
        )
    return value


@functools.cache
def known_regions() -> frozenset[str]:
    """Every region of every partition botocore knows (its endpoint data, no call to AWS)."""
    import botocore.session

    session = botocore.session.get_session()
    return frozenset(
        region
        for partition in session.get_available_partitions()
        for region in session.get_available_regions("cloudformation", partition_name=partition)
    )


def region_name(value: str) -> str:
    """``--region``: a region botocore knows (a newer region needs a newer botocore)."""
    if value not in known_regions():
        raise argparse.ArgumentTypeError(
            f"{shown(value)!r} is not an AWS region this botocore knows (for example us-east-1)"
        )
    return value


def seconds_within(low: int, high: int) -> Callable[[str], int]:
    """A number of seconds in [low, high], or a duration (``5m``) in that range."""

    def parse(value: str) -> int:
        seconds = int(value) if value.isdigit() else _duration_seconds(value)
        if seconds is None or not low <= seconds <= high:
            raise argparse.ArgumentTypeError(
                f"{shown(value)!r} is not a duration from {low} to {high} seconds (as 90, 90s, 5m or 1h)"
            )
        return seconds

    return parse


def _duration_seconds(value: str) -> int | None:
    match = _DURATION.fullmatch(value.strip())
    if not value.strip() or match is None:
        return None
    days, hours, minutes, seconds = (int(part or 0) for part in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def text_within(limit: int) -> Callable[[str], str]:
    """Free text of at most ``limit`` characters, one line, printable."""

    def parse(value: str) -> str:
        if not value.strip() or len(value) > limit or not value.isprintable():
            raise argparse.ArgumentTypeError(f"give one printable line of 1 to {limit} characters")
        return value.strip()

    return parse
