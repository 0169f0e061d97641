"""``python -m foreman`` is the ``foreman`` command."""

import sys

from .cli import main

sys.exit(main())
