"""``tablestream keys list`` and ``tablestream keys rotate``: the service's receipt signing keys
(``services.fairness.signing``, kept in Redis by ``services.store.signing_keys``). Run on the servers (it
needs the store's URL). ``rotate`` adds a new current key and closes the old key's period after
``--overlap`` seconds, at least ``MIN_OVERLAP_SECONDS`` (API processes reload the ring within a
minute, and sign with the old key until then); old keys stay, so receipts they signed still verify."""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from datetime import UTC, datetime

from services.cli.store_arguments import store_arguments
from services.fairness.receipts import (
    MIN_OVERLAP_SECONDS,
    RELOAD_SECONDS,
    RotationRaced,
    load_keys,
    rotate_keys,
)
from services.fairness.signing import ROTATION_OVERLAP_SECONDS, KeyRing, check_key_name
from services.store.connection import PoolLimits, connect_async, topology
from services.store.event_store import EventStore


def add_arguments(parser: argparse.ArgumentParser) -> None:
    env = os.environ
    parser.add_argument("action", choices=("list", "rotate"))
    store_arguments(parser)
    parser.add_argument(
        "--overlap",
        type=int,
        default=ROTATION_OVERLAP_SECONDS,
        help=f"rotate: seconds the old key still signs (default {ROTATION_OVERLAP_SECONDS})",
    )
    parser.add_argument(
        "--name",
        type=check_key_name,
        default=env.get("TABLESTREAM_SIGNING_KEY_NAME") or None,
        help="rotate: the new key's signed-note name (default: the old key's)",
    )


def _when(seconds: int | None) -> str:
    if seconds is None:
        return "now"
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def describe(ring: KeyRing) -> list[str]:
    """One line per key, oldest first: id, period, vkey; the current one marked."""
    lines = []
    for key in ring.public_keys():
        mark = "*" if key.key_id == ring.current.key_id else " "
        period = f"{_when(key.not_before)} .. {_when(key.not_after)}"
        lines.append(f"{mark} {key.key_id}  {period}  {key.document()['vkey']}")
    return lines


async def _run(args: argparse.Namespace) -> int:
    clients = connect_async(topology(args.redis_url, args.queue_url, args.redis_cluster), PoolLimits())
    store = EventStore(clients.store, clients.index)
    now = int(time.time())
    try:
        if args.action == "rotate":
            if args.overlap < 0:
                print("tablestream keys rotate: --overlap is 0 or more seconds")
                return 2
            try:
                ring = await store.run(rotate_keys(now, args.overlap, args.name))
            except RotationRaced as error:
                print(f"tablestream keys rotate: {error}")
                return 1
            old = ring.keys[-2].public
            print(f"new signing key {ring.current.key_id}; {old.key_id} signs until {_when(old.not_after)}")
            if args.overlap < MIN_OVERLAP_SECONDS:
                print(
                    f"(an overlap of {MIN_OVERLAP_SECONDS} s, not {args.overlap}: API processes take up to "
                    f"{int(RELOAD_SECONDS)} s to read the new key, and sign with the old one until then)"
                )
        else:
            found = await store.run(load_keys())
            if found is None:
                print("no signing keys yet: the API makes the first on its first start")
                return 0
            ring = found
        print("\n".join(describe(ring)))
        return 0
    finally:
        await clients.aclose()


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args))
