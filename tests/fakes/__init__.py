"""Test doubles, one module per role, used by every test that needs that role: the command
transport's (``canned_runner``, ``unreachable_runner``), the controller hosts that really run
our scripts (``probe_host``: the probe; ``rollout_nodes``: the slurmdbd roll-out), and the ones
that speak real protocols (``ssm_agent`` and its ``agent_*``/``session_*`` modules: the SSM
agent's data channel; ``record_plugin``; ``probe_output``). The simulation's controller,
``hyperpod_ha_dev.simulation.fake_controller``, is a development tool that tests use as is.
Registering a transport for one test: the ``use_transport`` fixture (``tests/conftest.py``)."""
