"""``python -m services.cli``: the same as the ``tablestream`` command."""

import sys

from services.cli import main

sys.exit(main())
