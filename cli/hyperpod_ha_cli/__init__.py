"""The on-call operator's ``hyperpod-ha`` command, installable on its own (``pipx install``):
status, runbook, drill, restore, configure, doctor and silence against a deployed stack. It
imports the runtime package ``hyperpod_ha`` and nothing of the development tools; those
(``simulate``, ``invoke``, ``lab``, ``local``) are found by name when the ``dev`` extra is
installed (:mod:`hyperpod_ha_cli.dev_tools`). ``main`` is the entry point."""
