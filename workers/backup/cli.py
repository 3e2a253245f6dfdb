"""The command line of ``tablestream export-all`` / ``import-all`` / ``rebuild-all`` (the process
``services.cli.backup`` execs as ``python -m workers.backup``).

``--data-dir DIR`` runs a command on a stopped ``tablestream serve``'s data directory: it takes the
directory's lock as ``serve`` does and starts its embedded Redis for the command alone, so that a
restore is written with no API and no worker running (docs/restore.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from services.operating.config import Settings
from services.store.connection import PoolLimits, connect_sync, topology
from services.store.embedded import DataDirLocked, EmbeddedRedis, data_dir_lock
from services.store.event_store import SyncEventStore
from workers.backup.export import export_all
from workers.backup.frame import FORMAT_1, BackupError, Sealed, import_path
from workers.backup.restore import check_backup, import_all, rebuild_all
from workers.stores import settings_archive


def _store(args: argparse.Namespace) -> SyncEventStore:
    """The store the command reads and writes, with the service's archive of finished games (the
    settings' ``archive_dir``; for ``--data-dir``, the ``archive`` under it, as ``serve`` keeps it)."""
    place = topology(args.redis_url, args.queue_url, args.redis_cluster)
    clients = connect_sync(place, PoolLimits(max_connections=4))
    settings = Settings.from_env()
    if args.data_dir is not None:
        settings = replace(settings, data_dir=args.data_dir)
    return SyncEventStore(clients.store, clients.index, archive=settings_archive(settings))


def _sealed_sentence(sealed: Sealed | None) -> str:
    """What the integrity check showed, said plainly (the module's docstring says why)."""
    if sealed is None or sealed.format == FORMAT_1:
        return f"a {FORMAT_1} file: no manifest was checked"
    where = (
        "this service's own signing keys"
        if sealed.checked_with == "target"
        else "the backup's own key (the target never held it): this shows the file is whole, not who made it"
    )
    return (
        f"the signed manifest (fingerprint {sealed.fingerprint}) verified with key {sealed.key_id}, {where}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """0 done, 1 refused (tampered games or conflicts, each named), 2 unreadable or unusable."""
    parser = argparse.ArgumentParser(
        prog="tablestream", description="Back up, restore or rebuild every stream."
    )
    parser.add_argument("command", choices=("export-all", "import-all", "rebuild-all"))
    parser.add_argument(
        "path", nargs="?", help="a backup file, or a directory (export: a new dated file; import: the newest)"
    )
    parser.add_argument(
        "--check", action="store_true", help="import-all: verify and compare only, write nothing"
    )
    parser.add_argument(
        "--fingerprint",
        help="import-all: the fingerprint export-all printed, kept apart from the file",
    )
    parser.add_argument(
        "--accept-format-1",
        action="store_true",
        help=f"import-all: read a {FORMAT_1} file, which has no signed manifest",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="the data directory of a stopped `tablestream serve`: its embedded Redis is started for "
        "the command alone (refused while serve holds it)",
    )
    parser.add_argument("--redis-url", default=os.environ.get("TABLESTREAM_REDIS_URL"))
    parser.add_argument("--queue-url", default=os.environ.get("TABLESTREAM_QUEUE_URL") or None)
    parser.add_argument(
        "--redis-cluster",
        choices=("auto", "yes", "no"),
        default=os.environ.get("TABLESTREAM_REDIS_CLUSTER") or "auto",
    )
    args = parser.parse_intermixed_args(argv)  # flags before or after the path
    if args.command != "rebuild-all" and not args.path:
        parser.error(f"{args.command} needs a DIR or FILE")
    if args.data_dir is not None:
        if args.redis_url and "--redis-url" in (argv if argv is not None else sys.argv):
            parser.error("give --data-dir or --redis-url, not both")
        return _on_data_dir(args)
    if not args.redis_url:  # never a default: another program's Redis there would be read or written
        parser.error(
            f"{args.command} needs the service's Redis: --redis-url URL or TABLESTREAM_REDIS_URL "
            "(the worker's own setting; `serve` prints its URL when it starts), or --data-dir DIR "
            "of a stopped `tablestream serve`"
        )
    return _run(args)


def _on_data_dir(args: argparse.Namespace) -> int:
    """The command on a stopped ``serve``'s embedded Redis: the data directory locked as ``serve``
    locks it (so that neither starts while the other runs), its Redis started with the AOF and
    fsync on every write, stopped cleanly (the AOF flushed) once the command ends."""
    try:
        with data_dir_lock(args.data_dir), EmbeddedRedis(args.data_dir / "redis", durable=True) as embedded:
            args.redis_url, args.queue_url, args.redis_cluster = embedded.url, None, "no"
            return _run(args)
    except DataDirLocked as exc:
        print(f"tablestream {args.command}: {exc}; stop it first", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        if args.command == "export-all":
            exported = export_all(store, args.path)
            print(
                f"exported {exported.games} games ({exported.finished} finished), "
                f"{exported.disputes} disputes, {exported.accounts} accounts, "
                f"{exported.finishes} finishes, {exported.tlog_leaves} public log leaves, "
                f"{exported.operator_entries} audit entries and chat reports to {exported.path} "
                f"({exported.bytes} bytes, mode 0600: "
                "it holds every game's secret seeds and the accounts' password hashes)\n"
                f"fingerprint {exported.fingerprint}  (keep it apart from the file: "
                "import-all --fingerprint checks the file is this one)"
            )
        elif args.command == "rebuild-all":
            print(f"rebuilt the projections and ratings of {rebuild_all(store)} games from their streams")
        elif args.check:
            _, checked = check_backup(store, import_path(args.path), args.fingerprint, args.accept_format_1)
            print(
                f"checked {checked.path}: {checked.games} games and {checked.disputes} disputes verified, "
                f"{checked.accounts} accounts and "
                f"{checked.finishes} finishes agree with the store"
                + (
                    ""
                    if checked.tlog is None
                    else f", the public log's {len(checked.tlog.leaves)} leaves give every checkpoint's root "
                    f"and agree with the store's {checked.tlog.target_size}"
                )
                + "; "
                + _sealed_sentence(checked.sealed)
                + "; nothing was written"
            )
        else:
            imported = import_all(store, args.path, args.fingerprint, args.accept_format_1)
            print(
                f"imported {imported.path}: {imported.games} games ({imported.written} new), "
                f"{imported.disputes} disputes ({imported.disputes_written} new or grown), "
                f"{imported.accounts} accounts ({imported.accounts_written} new), {imported.finishes} "
                f"finishes ({imported.finishes_written} new), {imported.tlog_leaves_written} public log "
                f"leaves and {imported.operator_entries_written} audit entries and chat reports restored; "
                "projections and ratings rebuilt; " + _sealed_sentence(imported.sealed)
            )
    except BackupError as exc:
        print(f"tablestream {args.command}: {exc.render()}", file=sys.stderr)
        return 1 if exc.problems else 2
    except OSError as exc:
        print(f"tablestream {args.command}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
