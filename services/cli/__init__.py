"""``tablestream``: serve, worker, demo, verify, bench, arena, export-all, import-all, rebuild-all, operator
(one module per command)."""

from __future__ import annotations

import argparse
import sys

from services.cli import arena, backup, bench, demo, operator, serve, verify, worker


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tablestream", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve.add_arguments(
        commands.add_parser("serve", help="run the HTTP API (and, without --redis-url, Redis and a worker)")
    )
    worker.add_arguments(
        commands.add_parser("worker", help="run a pool of RQ projection workers and the lag sweeper")
    )
    demo.add_arguments(commands.add_parser("demo", help="bots play complete games through the real HTTP API"))
    bench.add_arguments(
        commands.add_parser("bench", help="measure the service beside bare baselines on the same Redis")
    )
    arena.add_arguments(
        commands.add_parser(
            "arena", help="bots play bots in bulk, in process, and rate each level's strength"
        )
    )
    operator.add_arguments(
        commands.add_parser("operator", help="grant, revoke or list the accounts that are operators")
    )
    commands.add_parser("verify", help="check an exported game offline (no Redis, no server)", add_help=False)

    commands.add_parser(
        "export-all", help="write every stream to a backup file (0600: it holds secrets)", add_help=False
    )
    commands.add_parser(
        "import-all", help="restore a backup (verified) and rebuild every projection", add_help=False
    )
    commands.add_parser(
        "rebuild-all", help="rebuild every projection and rating from the streams", add_help=False
    )

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] and argv[0] in backup.COMMANDS:
        return backup.run(argv)  # its own flags: DIR|FILE [--redis-url URL ...]
    if argv[:1] == ["verify"]:
        return verify.main(argv[1:])  # its own flags: FILE [--receipt VERSION:HASH ...]
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve.run(args)
    if args.command == "worker":
        return worker.run(args)
    if args.command == "bench":
        return bench.run(args)
    if args.command == "arena":
        return arena.run(args)
    if args.command == "operator":
        return operator.run(args)
    return demo.run(args)
