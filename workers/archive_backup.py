"""The archived games' records for the logical backup (``workers.backup``, ``export-all``).

An archived game (``services.store.archive``) has left Redis in part: its stream, secret and
command records are in its archive file, while its tokens, chat and disputes stay in Redis. The
backup's game record (``workers.backup.read_game``) reads only Redis, and finds no stream for it;
``archived_game_record`` builds the same record, field for field, from the file and from what
stayed in Redis, so ``import-all`` restores an archived game like any other finished game (into
Redis: the next archive pass moves it out again, once the restored server's index is backfilled).
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from typing import Any

from services.history.chat_export import chat_section
from services.store.archive import Archive, ArchivedGame
from services.store.chat import ChatKeys
from services.store.disputes import index_key
from services.store.event_store import SyncEventStore
from services.store.keys import game_keys
from services.store.requests import text
from workers.backup import GAME_HASHES, _hash_text, _node_of, _read_disputes


def archived_game_record(store: SyncEventStore, game: ArchivedGame) -> dict[str, Any]:
    """The backup record of an archived game, as ``read_game`` gives it for a game in Redis."""
    game_id = game.game_id
    k = game_keys(game_id)
    chat = ChatKeys(game_id)
    pipe = _node_of(store, k.tokens).pipeline(transaction=True)
    pipe.hgetall(k.tokens)
    pipe.xrange(chat.stream, "-", "+")
    pipe.hgetall(chat.state)
    pipe.zrange(index_key(game_id), 0, -1, withscores=True)
    tokens, chat_stream, chat_state, opened = pipe.execute()
    entries = [{"version": e.version, "hash": e.hash, "data": e.data.decode("utf-8")} for e in game.entries]
    record: dict[str, Any] = {"kind": "game", "id": game_id, "entries": entries}
    archived = {
        "secret": game.secret,
        "seat_commands": game.seat_commands,
        "commands": game.commands,
        "seats": game.seats,
    }
    for name in GAME_HASHES:
        record[name] = _hash_text(tokens) if name == "tokens" else dict(sorted(archived[name].items()))
    if chat_stream or chat_state:
        stored = [(int(text(i).split("-")[1]), f[b"d"], text(f[b"h"])) for i, f in chat_stream]
        record["chat"] = chat_section(stored)
        record["chat_state"] = _hash_text(chat_state)
    if opened:
        record["disputes"] = _read_disputes(store, game_id, [(text(d), int(at)) for d, at in opened])
    return record


def archived_game_records(
    store: SyncEventStore, archive: Archive, written: Container[str] = ()
) -> Iterator[dict[str, Any]]:
    """The record of every archived game not in ``written`` (the ids ``export-all`` wrote from
    Redis: a game archived but not yet removed, by a pass that died in between, is there), one file
    at a time."""
    for game in archive.games():
        if game.game_id not in written:
            yield archived_game_record(store, game)
