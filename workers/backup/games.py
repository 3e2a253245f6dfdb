"""Games in a backup: one ``game`` line per game, its event stream and the secrets beside it.

A game's line holds every stream entry exactly as stored (``data`` as UTF-8 text, its ``hash``), the
game's secret (seed root and master: never public), the seat tokens' SHA-256 digests and the
command dedup records (``seat_commands``, ``commands``, ``seats``), so that a restored running game
goes on with the same seat tokens and the same idempotent retries; and what the game keeps beside
its stream: its chat (``workers.backup.chat``) and its disputes (``workers.backup.disputes``).

The games in Redis are written in the lobby's order, then one line per game archived out of Redis
(``services.store.archive``; ``read_archived_game``: the same record). Export reads one game at a
time (one ``MULTI`` on the game's node: a consistent snapshot of its keys), scanning every primary
of a Redis Cluster. Import verifies every game with the offline verifier (``services.history.verify``:
hash chain, records, rules re-run, seeds, scores; a running game up to its unrevealed round), checks
its secret against the stream's commitments, and writes a game the target lacks in one ``MULTI``
guarded by ``WATCH`` (an identical game is left alone; a different one is never overwritten).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import redis

from domain.fairness import SecretSeeds
from services.history.export import build_export
from services.history.records import Entry
from services.history.replay import CorruptStream, replay
from services.history.verify import verify_export
from services.history.verify_report import SCORES
from services.store.archive import ArchivedGame
from services.store.event_store import SyncEventStore
from services.store.keys import LOBBY, LOBBY_ORDER, PREFIX, game_keys
from services.store.requests import Operation, index_call, text
from workers.backup import chat, disputes
from workers.backup.frame import BackupError, hash_text, node_of, scan

GAME_HASHES = ("secret", "tokens", "seat_commands", "commands", "seats")
"""The game's hashes that are source, not projection (``services.store.keys.GameKeys``)."""


# -- reading the store ---------------------------------------------------------------------------------------


def game_ids(store: SyncEventStore) -> list[str]:
    """Every game id (not the accounts' streams, whose tag is ``acct:<id>``), sorted."""
    found = scan(store, f"{PREFIX}:{{*}}:events", f"{PREFIX}:{{", "}:events")
    return sorted({g for g in found if not g.startswith("acct:")})


def creation_order(store: SyncEventStore) -> list[str]:
    """Every game id, those the lobby has seen in its order (oldest first, so that an import in this
    order gives the restored lobby the same order), then the others by id."""
    stored = game_ids(store)
    listed = [text(g) for g in store.run(_lobby_order())]
    present = set(stored)
    ordered = [g for g in listed if g in present]
    seen = set(ordered)
    return ordered + [g for g in stored if g not in seen]


def _lobby_order() -> Operation[list[bytes]]:
    return (yield index_call("ZRANGE", LOBBY_ORDER, 0, -1))  # type: ignore[no-any-return]


def read_game(store: SyncEventStore, game_id: str) -> dict[str, Any] | None:
    """A game's backup record, read in one ``MULTI`` on its node (``None``: it has no stream)."""
    k = game_keys(game_id)
    pipe = node_of(store, k.events).pipeline(transaction=True)
    pipe.xrange(k.events, "-", "+")
    for name in GAME_HASHES:
        pipe.hgetall(getattr(k, name))
    _read_beside(pipe, game_id)
    stream, *hashes, chat_stream, chat_state, opened = pipe.execute()
    if not stream:
        return None
    entries = []
    for expected, (stream_id, fields) in enumerate(stream, start=1):
        if text(stream_id) != f"0-{expected}":
            raise BackupError(f"game {game_id}: its stream is not contiguous at {text(stream_id)}")
        entries.append(
            {"version": expected, "hash": text(fields[b"h"]), "data": fields[b"d"].decode("utf-8")}
        )
    stored = {name: hash_text(reply) for name, reply in zip(GAME_HASHES, hashes, strict=True)}
    return _game_record(store, game_id, entries, stored, chat_stream, chat_state, opened)


def read_archived_game(store: SyncEventStore, game: ArchivedGame) -> dict[str, Any]:
    """The backup record of a game archived out of Redis (``services.store.archive``), field for
    field as ``read_game`` gives it for a game in Redis: its stream, secret and command records from
    its archive file, its seat tokens, chat and disputes from Redis, where they stay."""
    k = game_keys(game.game_id)
    pipe = node_of(store, k.tokens).pipeline(transaction=True)
    pipe.hgetall(k.tokens)
    _read_beside(pipe, game.game_id)
    tokens, chat_stream, chat_state, opened = pipe.execute()
    entries = [{"version": e.version, "hash": e.hash, "data": e.data.decode("utf-8")} for e in game.entries]
    archived = {"secret": game.secret, "seat_commands": game.seat_commands, "commands": game.commands,
                "seats": game.seats, "tokens": hash_text(tokens)}  # fmt: skip
    stored = {name: dict(sorted(archived[name].items())) for name in GAME_HASHES}
    return _game_record(store, game.game_id, entries, stored, chat_stream, chat_state, opened)


def _read_beside(pipe: Any, game_id: str) -> None:
    """Queue the reads of what a game keeps beside its stream: its chat and its disputes' index."""
    chat.queue_reads(pipe, game_id)
    disputes.queue_index_read(pipe, game_id)


def _game_record(
    store: SyncEventStore,
    game_id: str,
    entries: list[dict[str, Any]],
    hashes: Mapping[str, dict[str, str]],
    chat_stream: Any,
    chat_state: Any,
    opened: Any,
) -> dict[str, Any]:
    record: dict[str, Any] = {"kind": "game", "id": game_id, "entries": entries, **hashes}
    # the table's chat: source, beside the game's chain (never in it)
    record.update(chat.chat_fields(chat_stream, chat_state))
    if opened:  # its disputes: source too (a verdict is recorded nowhere else)
        record["disputes"] = disputes.read_disputes(store, game_id, [(text(d), int(at)) for d, at in opened])
    return record


def all_games(store: SyncEventStore, written: set[str]) -> Iterator[dict[str, Any]]:
    """Every game's record: the games in Redis in the lobby's order, then the games archived out of
    it (``store.archive``) that were not among them (one archived but not yet removed, by a pass
    that died in between, is read from Redis). ``written``: the ids written so far."""
    for game_id in creation_order(store):
        record = read_game(store, game_id)
        if record is not None:  # None: removed since the scan (retention) or archived meanwhile
            yield record
    if store.archive is not None:  # a game archived during the loop above is read here, once
        for game in store.archive.games():
            if game.game_id not in written:
                yield read_archived_game(store, game)
    # A game archived out of Redis keeps its lobby summary there: one whose file this archive does
    # not hold was archived into another directory, and a backup without it would lose it unsaid.
    for raw in store.index.hscan_iter(LOBBY, no_values=True):
        game_id = text(raw)
        if game_id in written:
            continue
        record = read_game(store, game_id)
        if record is not None:  # created since the scan: it is in the backup too
            yield record
        elif store.archive is None or not store.archive.has(game_id):
            where = "no archive" if store.archive is None else f"the archive {store.archive.directory}"
            raise BackupError(
                f"game {game_id} has left Redis for the archive of finished games, but {where} holds "
                "no file of it: give the service's own archive (TABLESTREAM_ARCHIVE_DIR, or "
                "--data-dir of a stopped serve), or the backup would lose it"
            )


def is_finished(record: Mapping[str, Any]) -> bool:
    try:
        build_export(entries_of(record))
    except Exception:
        return False
    return True


def entries_of(record: Mapping[str, Any]) -> list[Entry]:
    raw = record.get("entries")
    if not isinstance(raw, list) or not raw:
        raise BackupError(f"game {record.get('id')!r}: no entries")
    entries = []
    for item in raw:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("version"), int)
            and isinstance(item.get("hash"), str)
            and isinstance(item.get("data"), str)
        ):
            raise BackupError(f"game {record.get('id')!r}: an entry is not {{version, hash, data}}")
        entries.append(Entry(item["version"], item["data"].encode("utf-8"), item["hash"]))
    return entries


# -- checks --------------------------------------------------------------------------------------------------


def verify_game(record: Mapping[str, Any]) -> list[str]:
    """Why ``record`` is not a genuine game (empty: it is). Its secret must produce the stream's
    commitments and revealed seeds; the stream must then pass the offline verifier as an export
    does, a finished or closed game as its export, a running one with the rounds its seeds have not
    revealed yet drawn from that secret (so that its deals are checked as strictly as a finished
    game's), all but its final scores."""
    game_id = record.get("id")
    try:
        entries = entries_of(record)
    except BackupError as exc:
        return [str(exc)]
    rp = replay(entries)
    if rp.created is None or rp.table is None:
        return [f"the stream does not start with a readable table: {rp.problem}"]
    if rp.created.game_id != game_id:
        return [f"the stream is game {rp.created.game_id!r}, not {game_id!r}"]
    seeds, problems = _secret_of(record.get("secret"), rp.commitments, rp.revealed)
    if problems:
        return problems
    try:
        doc = build_export(entries, running=True)
    except (CorruptStream, ValueError) as exc:
        return [f"unreadable: {exc}"]
    over = "scores" in doc or "closed" in doc
    assert seeds is not None
    sealed = {} if over else {r: seeds.round_seed(r) for batch in rp.batches for r in batch.pending}
    report = verify_export(doc, sealed_seeds=sealed)
    return [
        f"{bucket.label}: {check}: {detail}"
        for _, bucket in sorted(report.rounds.items())
        for check, detail in bucket.failures
        if over or check != SCORES
    ]


def _secret_of(
    secret: Any, commitments: Mapping[int, str], revealed: Mapping[int, bytes]
) -> tuple[SecretSeeds | None, list[str]]:
    """The game's seeds from its backed-up secret, or why they are not the stream's."""
    if not isinstance(secret, dict) or not {"root", "master"} <= secret.keys():
        return None, ["the game's secret (root, master) is missing"]
    try:
        seeds = SecretSeeds(bytes.fromhex(secret["root"]), bytes.fromhex(secret["master"]))
    except (TypeError, ValueError):
        return None, ["the game's secret is not hex"]
    problems = [
        f"secret: chain {chain}'s commitment is not the stream's"
        for chain, commitment in sorted(commitments.items())
        if seeds.chain_commitment(chain) != commitment
    ]
    problems += [
        f"secret: round {r}'s seed is not the one the stream revealed"
        for r, seed in sorted(revealed.items())
        if seeds.round_seed(r) != seed
    ]
    return seeds, problems


def shape_problems(record: Mapping[str, Any]) -> list[str]:
    """The game's hashes must be text to text, as stored."""
    return [
        f"its {name} hash is not an object of strings"
        for name in GAME_HASHES
        if not (
            isinstance(record.get(name, {}), dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in record.get(name, {}).items())
        )
    ]


def _stored_head(store: SyncEventStore, game_id: str) -> tuple[int, str] | None:
    events = game_keys(game_id).events
    top: Any = node_of(store, events).xrevrange(events, "+", "-", count=1)
    if not top:
        return None
    stream_id, fields = top[0]
    return int(text(stream_id).split("-")[1]), text(fields[b"h"])


def game_conflict(store: SyncEventStore, record: Mapping[str, Any]) -> str | None:
    """``None`` when the target has no such game or holds exactly it (same head and secret)."""
    game_id = record["id"]
    stored = _stored_head(store, game_id)
    if stored is None:
        return None
    last = record["entries"][-1]
    secret = store.secret(game_id) or {}
    if stored != (last["version"], last["hash"]) or secret.get("root") != record["secret"].get("root"):
        return (
            f"game {game_id}: the store holds a different game (head {stored[0]} {stored[1][:12]}…, "
            f"the backup's {last['version']} {last['hash'][:12]}…); it is never overwritten"
        )
    return None


# -- writing -------------------------------------------------------------------------------------------------


def write_game(store: SyncEventStore, record: Mapping[str, Any]) -> bool:
    """Write a game the store lacks in one guarded ``MULTI``; ``False`` if it holds it already."""
    game_id = record["id"]
    k = game_keys(game_id)
    node = node_of(store, k.events)
    with node.pipeline(transaction=True) as pipe:
        for _ in range(5):
            try:
                pipe.watch(k.events)  # type: ignore[no-untyped-call]
                if pipe.exists(k.events):
                    pipe.unwatch()
                    if game_conflict(store, record):
                        raise BackupError(f"game {game_id} was written by someone else during the import")
                    return False
                # marked first, as an append does: a crash after the write leaves it to the sweeper
                store.mark_dirty(game_id)
                pipe.multi()
                for entry in record["entries"]:
                    pipe.xadd(k.events, {"d": entry["data"].encode("utf-8"), "h": entry["hash"]},
                              id=f"0-{entry['version']}")  # fmt: skip
                for name in GAME_HASHES:
                    values = record.get(name) or {}
                    if values:
                        pipe.hset(getattr(k, name), mapping=values)
                chat.queue_writes(pipe, game_id, record)
                pipe.execute()
                return True
            except redis.WatchError:
                continue
    raise BackupError(f"game {game_id} kept changing during the import")
