"""``tablestream bench [--smoke] [--core | --quick | --capacity] [--seconds 10] [--clients 8]
[--tables 64] [--capacity-tables 10000] [--profile DIR]``;
``tablestream bench --strong-bots [--smoke] [--seconds 10] [--bot-tables 4]``: a paced table's
projection lag alone and beside tables of strong bots (``services.bench.strong_bots``);
``tablestream bench --peer bgio [--smoke] [--seconds 10] [--tables 64] [--clients 8]``: only the
boardgame.io peer rows (``services.bench.bgio_peer``)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from services.bench import strong_bots
from services.bench.main import bench
from services.bench.run import Options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--smoke", action="store_true", help="every row in seconds, tiny counts")
    parser.add_argument(
        "--core", action="store_true",
        help="only the anchors, the views and the full command (a quick before/after of the hot routes)",
    )  # fmt: skip
    parser.add_argument("--seconds", type=float, default=Options.seconds, help="length of each timed row")
    parser.add_argument("--clients", type=int, default=Options.clients, help="client processes for games")
    parser.add_argument("--tables", type=int, default=Options.tables, help="tables played at once")
    parser.add_argument("--finished-games", type=int, default=Options.finished_games)
    parser.add_argument("--capacity-tables", type=int, default=Options.capacity_tables)
    parser.add_argument(
        "--quick", action="store_true",
        help="the command path's rows only (views, command, lag, finished games): no replay, capacity, peer",
    )  # fmt: skip
    parser.add_argument(
        "--capacity", action="store_true",
        help="only the capacity row: --capacity-tables tables alive, Redis memory and RSS after each tenth",
    )  # fmt: skip
    parser.add_argument(
        "--strong-bots", action="store_true",
        help="only a paced table's projection lag alone and beside tables of strong bots",
    )  # fmt: skip
    parser.add_argument("--bot-tables", type=int, default=4, help="tables of 4 strong bots (--strong-bots)")
    parser.add_argument(
        "--peer", choices=("bgio",), default=None,
        help="only the boardgame.io peer rows: server CPU per move, ours and boardgame.io's (npm) in turns, "
        "with --tables tables for --seconds per turn",
    )  # fmt: skip
    parser.add_argument(
        "--profile", type=Path, default=None, metavar="DIR",
        help="run the API and the worker under pyinstrument; text reports in DIR",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if args.strong_bots:
        strong_bots.main(
            ["--smoke"]
            if args.smoke
            else ["--seconds", str(args.seconds), "--bot-tables", str(args.bot_tables)]
        )
        return 0
    options = Options.smoke_run() if args.smoke else Options(
        core=args.core,
        seconds=args.seconds,
        clients=args.clients,
        tables=args.tables,
        finished_games=args.finished_games,
        capacity_tables=args.capacity_tables,
        quick=args.quick,
        capacity_only=args.capacity,
    )  # fmt: skip
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
        options = Options(**{**options.__dict__, "profile_dir": args.profile})
    if args.peer is not None:
        options = dataclasses.replace(options, peer=args.peer)
    bench(options)
    return 0
