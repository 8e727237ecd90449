"""hyperpod-ha's stack as it is deployed, written from its descriptions: template.yaml's
generated end (every alarm, the dashboard, the Run Command documents, the node scripts), the state
machines' settings checks and docs/messages.md. ``make generate`` (:mod:`.generate`) writes them;
the tests fail until what is written is what the descriptions make.

Nothing here ships to Lambda or runs at deploy time: it writes the files CloudFormation and Step
Functions read. It may import the runtime package ``hyperpod_ha`` (a node script, a metric's
name, a message's builder); nothing in ``layers/``, ``functions/`` or ``lab/`` imports it, and it
imports nothing of ``hyperpod_ha_dev``, which may import it."""
