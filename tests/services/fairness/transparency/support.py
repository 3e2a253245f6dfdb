"""Recorded games written into a store's streams as the append script leaves them, for the log."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import fakeredis
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from starlette.testclient import TestClient

from services.api.app import create_app
from services.fairness.receipts import ensure_keys
from services.fairness.signing import raw_public
from services.fairness.transparency import checkpoint as cp
from services.fairness.transparency import leaves
from services.fairness.transparency.log import TransparencyLog, note_loggable
from services.history.records import Entry, decode_stored
from services.operating.config import Settings
from services.store.event_store import SyncEventStore
from services.store.keys import game_keys
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED
from tests.support.recorded import RecordedGame, recorded_random_game


def finished_game(seed: int, game: str = "skull", players: int = 3) -> tuple[str, RecordedGame]:
    """A whole random game (its id is ``test-<game>-<seed>``) and its recording."""
    return f"test-{game}-{seed}", recorded_random_game(game, players, seed=seed)


def chat_leaves(game_id: str, entries: Sequence[Entry]) -> list[leaves.Head]:
    """The chat's leaves a game without chat logs: its empty chat at each of its heads."""
    return [
        leaves.chat_head_at(game_id, [], head.version) for head in leaves.heads_of_stream(game_id, entries)
    ]


def batch_ends(entries: Sequence[Entry]) -> list[int]:
    """Positions (exclusive ends) at which a batch ends: a stream cut there is one the store held."""
    ends = [i for i in range(1, len(entries)) if decode_stored(entries[i].data).command is not None]
    return [*ends, len(entries)]


def store_entries(client, game_id: str, entries: Sequence[Entry]) -> None:
    """XADD the entries not yet in the game's stream (``client``: a sync Redis), in one MULTI as the
    store's append script writes a batch: a reader never sees part of one (a log appender that read
    a batch's first events only logged a head no whole stream has: CI35, under load)."""
    key = game_keys(game_id).events
    have = client.xlen(key)
    pipe = client.pipeline(transaction=True)
    for entry in entries[have:]:
        pipe.xadd(key, {"d": entry.data, "h": entry.hash}, id=f"0-{entry.version}")
    pipe.execute()


T0 = 1_800_000_000
WITNESS = Ed25519PrivateKey.generate()
WITNESS_KEY = cp.witness_key("witness.example/w1", raw_public(WITNESS.public_key()))


def served_app(peer: str = "testclient", **settings_: str) -> Iterator[tuple[TestClient, TransparencyLog]]:
    """The app on fakeredis with a configured witness, and the log on the same server; the test
    client connects from ``peer``."""
    server = fakeredis.FakeServer()
    settings = Settings(admin_token=ADMIN_TOKEN, log_witnesses=WITNESS_KEY.vkey, **{**UNLIMITED, **settings_})
    app = create_app(
        settings, lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server))
    )
    with TestClient(app, raise_server_exceptions=False, client=(peer, 50000)) as client:
        yield client, TransparencyLog(SyncEventStore(fakeredis.FakeRedis(server=server)))


def logged(tlog: TransparencyLog, seed: int) -> str:
    game_id, g = finished_game(seed)
    store_entries(tlog.redis, game_id, g.entries)
    note_loggable(tlog.redis, game_id, g.entries[-1].version)
    tlog.append_pending()
    return game_id


def publish(tlog: TransparencyLog, now: int) -> str:
    return tlog.publish(tlog.store.run(ensure_keys(T0, "tables.example")), now)
