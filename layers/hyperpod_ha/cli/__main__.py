"""``python -m hyperpod_ha.cli``: the same as the ``hyperpod-ha`` command."""

import sys

from hyperpod_ha.cli import main

sys.exit(main())
