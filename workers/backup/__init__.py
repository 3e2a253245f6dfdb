"""Logical backup and restore of the event store: ``tablestream export-all`` / ``import-all``.

A backup is one JSON Lines file holding what the store cannot derive (the source of truth) and
nothing it can (docs/operations.md, "Backups and restore", lists both). The package is split by what
each part carries, around one shared frame:

- ``frame``: the file's format (a ``header`` line, the record lines, an ``end`` line with the counts
  and the signed manifest), writing and reading lines, the manifest, the integrity check and what its
  signature can and cannot show, and the store's nodes as every part reads them;
- ``signing_keys``: one ``signing_keys`` line, the receipt key ring with its private seeds;
- ``tlog``: one ``tlog`` line when the public log of game heads holds anything;
- ``finishes``: one ``finish`` line per entry of the ratings' finish log, read before the games;
- ``games``: one ``game`` line per game, its stream, secret and command records, with its
  ``chat`` (``chat``) and its ``disputes`` (``disputes``) beside them;
- ``accounts``: one ``account`` line per account;
- ``operator``: one ``operator`` line when the console holds anything;
- ``export`` and ``restore``: the loops that write every kind into a file, and check the file whole
  and then every line before writing any (``rebuild-all`` too); ``cli``: the command line.

The names other code uses are kept here, as they were when this was one module.
"""

from workers.backup.accounts import ACCOUNT_ID, account_ids, read_account
from workers.backup.chat import verify_chat
from workers.backup.cli import main
from workers.backup.disputes import verify_disputes
from workers.backup.export import Exported, export_all
from workers.backup.finishes import finish_log
from workers.backup.frame import (
    FILE_PREFIX,
    FORMAT,
    FORMAT_1,
    LOG_PAGE,
    SCAN_COUNT,
    SIGNATURE_DOMAIN,
    SUFFIX,
    BackupError,
    Manifest,
    Sealed,
    check_integrity,
    export_path,
    file_digest,
    import_path,
    record_key,
    record_name,
    records,
    signature_message,
)
from workers.backup.frame import encode_line as _line
from workers.backup.games import (
    GAME_HASHES,
    creation_order,
    game_ids,
    read_archived_game,
    read_game,
    verify_game,
)
from workers.backup.operator import OPERATOR_STREAMS, STREAM_ID, read_operator
from workers.backup.restore import Imported, check_backup, import_all, rebuild, rebuild_all

__all__ = [
    "ACCOUNT_ID",
    "FILE_PREFIX",
    "FORMAT",
    "FORMAT_1",
    "GAME_HASHES",
    "LOG_PAGE",
    "OPERATOR_STREAMS",
    "SCAN_COUNT",
    "SIGNATURE_DOMAIN",
    "STREAM_ID",
    "SUFFIX",
    "BackupError",
    "Exported",
    "Imported",
    "Manifest",
    "Sealed",
    "_line",
    "account_ids",
    "check_backup",
    "check_integrity",
    "creation_order",
    "export_all",
    "export_path",
    "file_digest",
    "finish_log",
    "game_ids",
    "import_all",
    "import_path",
    "main",
    "read_account",
    "read_archived_game",
    "read_game",
    "read_operator",
    "rebuild",
    "rebuild_all",
    "record_key",
    "record_name",
    "records",
    "signature_message",
    "verify_chat",
    "verify_disputes",
    "verify_game",
]
