"""``python -m calc``: see :mod:`calc.cli.main`."""

import sys

from calc.cli.main import main

sys.exit(main())
