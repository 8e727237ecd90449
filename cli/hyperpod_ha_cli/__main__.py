"""``python -m hyperpod_ha_cli``: the same as the ``hyperpod-ha`` command."""

import sys

from hyperpod_ha_cli.main import main

sys.exit(main())
