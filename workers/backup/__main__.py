"""``python -m workers.backup``: the process ``tablestream export-all|import-all|rebuild-all`` execs."""

import sys

from workers.backup.cli import main

sys.exit(main())
