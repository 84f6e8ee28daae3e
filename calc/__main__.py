"""``python -m calc``: see :mod:`calc.cli`."""

import sys

from calc.cli import main

sys.exit(main())
