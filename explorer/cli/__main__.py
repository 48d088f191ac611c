"""`python -m explorer.cli`: the `explorer` command, as the installed script runs it."""

import sys

from explorer.cli import main

sys.exit(main())
