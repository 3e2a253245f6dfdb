"""``tablestream export-all DIR|FILE``, ``tablestream import-all [--check] DIR|FILE`` and
``tablestream rebuild-all`` [--redis-url URL | --data-dir DIR] [--queue-url URL] [--redis-cluster auto|yes|no]
(import-all also [--fingerprint HEX] [--accept-format-1]): a
logical backup and restore of every stream, and every projection rebuilt from the streams.

The process becomes ``python -m workers.backup`` with the same arguments (exec, like ``worker``):
the restore rebuilds the projections with the workers' own code, which the CLI does not import.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

BACKUP_MODULE = "workers.backup"
COMMANDS = ("export-all", "import-all", "rebuild-all")


def backup_command(argv: Sequence[str]) -> list[str]:
    """The command line of the backup process for ``export-all ...`` or ``import-all ...``."""
    return [sys.executable, "-m", BACKUP_MODULE, *argv]


def run(argv: Sequence[str]) -> int:
    command = backup_command(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command)
