"""``tablestream operator grant|revoke NAME`` and ``tablestream operator list``: who may use the
operator's console with an account (``services.operating.operator``). Run on the servers (it needs the
store's URL); each grant and revoke is recorded in the audit log as done by ``cli``."""

from __future__ import annotations

import argparse
import asyncio

from services.accounts.registry import Accounts
from services.cli.store_arguments import store_arguments
from services.errors import AppError
from services.operating.operator import grant, revoke
from services.store import operator as store_operator
from services.store.connection import PoolLimits, connect_async, topology
from services.store.event_store import EventStore


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("grant", "revoke", "list"))
    parser.add_argument("name", nargs="?", help="the account's name or id (grant, revoke)")
    store_arguments(parser)


async def _run(args: argparse.Namespace) -> int:
    clients = connect_async(topology(args.redis_url, args.queue_url, args.redis_cluster), PoolLimits())
    store = EventStore(clients.store, clients.index)
    try:
        if args.action == "list":
            for account_id in await store.run(store_operator.operators()):
                print(account_id)
            return 0
        if not args.name:
            print(f"tablestream operator {args.action}: name the account")
            return 2
        change = grant if args.action == "grant" else revoke
        try:
            account_id, changed = await change(store, Accounts(store), args.name)
        except AppError as error:
            print(f"tablestream operator {args.action}: {error.message}")
            return 1
        verb = "is now an operator" if args.action == "grant" else "is no longer an operator"
        print(f"{args.name} ({account_id}) {verb}" + ("" if changed else " (unchanged)"))
        return 0
    finally:
        await clients.aclose()


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args))
