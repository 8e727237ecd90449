"""HyperPod's hand on a controller, as the probe's ``hyperpod_hand`` section says it: where
``/opt/slurm`` links to (HyperPod's AMIs carry ``/opt/slurm-24.11.x`` and ``/opt/slurm-25.11.x``,
the link chooses), and the Slurm nodes HyperPod is replacing or rebooting (their reason is
``Action:Replace`` or ``Action:Reboot``). Never raises: a line out of its form is skipped."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from hyperpod_ha.slurm.text import excerpt, key_values, split_lines

MAX_NODE_ACTIONS: Final = 32
_ACTION = re.compile(r"Action:(Replace|Reboot)")
_NODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


@dataclass(frozen=True)
class NodeAction:
    node: str
    action: str  # "Replace" or "Reboot"

    def __str__(self) -> str:
        return f"{self.node}: Action:{self.action}"


@dataclass(frozen=True)
class HyperpodHand:
    slurm_link: str | None = None  # the target of /opt/slurm
    slurm_link_error: str | None = None
    node_actions: tuple[NodeAction, ...] = ()
    actions_error: str | None = None  # sinfo -R did not answer: the actions are not known


def parse_hyperpod_hand(text: str) -> HyperpodHand:
    values = dict(key_values(text))
    actions: list[NodeAction] = []
    for line in split_lines(text):
        node, bar, reason = line.removeprefix("action ").partition("|")
        found = _ACTION.search(reason) if line.startswith("action ") and bar else None
        if found is not None and _NODE.fullmatch(node) and len(actions) < MAX_NODE_ACTIONS:
            actions.append(NodeAction(node, found[1]))
    return HyperpodHand(
        slurm_link=_text(values.get("slurm_link")),
        slurm_link_error=_text(values.get("slurm_link_error")),
        node_actions=tuple(actions),
        actions_error=_text(values.get("actions_error")),
    )


def _text(value: str | None) -> str | None:
    return excerpt(value) if value else None
