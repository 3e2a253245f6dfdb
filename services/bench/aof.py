"""Where the append-only file's bytes go: the bench stack (``tablestream bench``'s), ``games`` Skull
King tables created, joined and played to the end by 2 client processes, then the AOF's new
commands parsed and summed by command and key (game ids folded), per event.

    python -m services.bench.aof [--games 3] [--top 30]
"""

from __future__ import annotations

import argparse
import collections
import re
import tempfile
from pathlib import Path

from services.bench.players import Players
from services.bench.run import aof_size, drain, stream_bytes, stream_events
from services.bench.stack import running_stack


def commands(data: bytes) -> list[tuple[list[bytes], int]]:
    """The RESP arrays of an AOF part, each with its size in bytes."""
    found, at = [], 0
    while at < len(data):
        if data[at : at + 1] != b"*":  # not an array (an RDB preamble would not be here): skip a line
            at = data.index(b"\n", at) + 1
            continue
        begin = at
        end = data.index(b"\r\n", at)
        count, at = int(data[at + 1 : end]), end + 2
        args = []
        for _ in range(count):
            end = data.index(b"\r\n", at)
            length, at = int(data[at + 1 : end]), end + 2
            args.append(data[at : at + length])
            at += length + 2
        found.append((args, at - begin))
    return found


def kind(args: list[bytes]) -> str:
    key = args[1].decode(errors="replace") if len(args) > 1 else ""
    key = re.sub(r"[0-9a-f]{8,}", "<id>", re.sub(r"\{[^}]*\}", "{g}", key))
    return f"{args[0].decode().upper()} {key}"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m services.bench.aof", description=__doc__)
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--sample", action="store_true", help="print one command of each kind, as written")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tablestream-aof-") as tmp, running_stack(Path(tmp)) as stack:
        players = Players(stack.port, 2)
        try:
            parts = sorted((Path(tmp) / "redis" / "appendonlydir").glob("*.incr.aof"))
            start = {part: part.stat().st_size for part in parts}
            before = aof_size(stack.redis.url)
            tables, _ = players.create(args.games)
            _, tables, _ = players.play(tables, finish=True)
            drain(stack, tables)
            ids = [t.game_id for share in tables for t in share]
            grown = aof_size(stack.redis.url) - before
            events, stored = stream_events(stack.redis.url, ids), stream_bytes(stack.redis.url, ids)
            parts = sorted((Path(tmp) / "redis" / "appendonlydir").glob("*.incr.aof"))
            data = b"".join(part.read_bytes()[start.get(part, 0) :] for part in parts)
        finally:
            players.close()
    print(f"{grown / events:,.0f} AOF bytes per event, {stored / events:,.0f} stored ({events} events)")
    sizes: collections.Counter[str] = collections.Counter()
    counts: collections.Counter[str] = collections.Counter()
    samples: dict[str, list[bytes]] = {}  # the last command of each kind
    for each, size in commands(data):
        sizes[kind(each)] += size
        counts[kind(each)] += 1
        samples[kind(each)] = each
    for name, size in sizes.most_common(args.top):
        print(f"{size / events:8.1f} B/event {counts[name]:7d}x  {name}")
        if args.sample:
            print("          " + " ".join(repr(arg)[2:-1][:120] for arg in samples[name]))


if __name__ == "__main__":
    main()
