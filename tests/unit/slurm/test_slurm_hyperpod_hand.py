"""The probe's hyperpod_hand section: /opt/slurm's link and the nodes HyperPod acts on."""

from __future__ import annotations

from hyperpod_ha.slurm import HyperpodHand, NodeAction, parse_hyperpod_hand


def test_the_link_and_the_nodes_being_replaced_or_rebooted() -> None:
    text = (
        "slurm_link=/opt/slurm-25.11.7\n"
        "action ip-10-1-2-3|Action:Replace\n"
        "action ip-10-1-2-4|Action:Reboot (by HyperPod health agent)\n"
        "action ip-10-1-2-5|Not responding\n"  # not HyperPod's
        "action bad name|Action:Replace\n"  # not a node name
        "ip-10-1-2-6|Action:Replace\n"  # not the probe's line
    )
    assert parse_hyperpod_hand(text) == HyperpodHand(
        slurm_link="/opt/slurm-25.11.7",
        node_actions=(NodeAction("ip-10-1-2-3", "Replace"), NodeAction("ip-10-1-2-4", "Reboot")),
    )
    assert str(NodeAction("ip-10-1-2-3", "Replace")) == "ip-10-1-2-3: Action:Replace"


def test_what_is_not_known_is_said() -> None:
    found = parse_hyperpod_hand(
        "slurm_link_error=no /opt/slurm\nactions_error=sinfo -R: timed out (exit 124)"
    )
    assert found == HyperpodHand(
        slurm_link_error="no /opt/slurm", actions_error="sinfo -R: timed out (exit 124)"
    )


def test_the_node_actions_are_bounded() -> None:
    text = "\n".join(f"action n{i}|Action:Replace" for i in range(100))
    assert len(parse_hyperpod_hand(text).node_actions) == 32
