"""The lobby's announcements (``indexes.after_projection``): a summary that changed besides its
version is published on the lobby's channel of the indexes' server, once it is in place; one that
changed only its version is not. On fakeredis, a real server, and a cluster (indexes beside it)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
import redis

from services.store.event_store import SyncEventStore
from services.store.indexes import lobby_changed
from services.store.keys import LOBBY_CHANNEL
from tests.conftest import Clients, IndexClients


def summary(version: int, seats_taken: int = 0, status: str = "waiting") -> bytes:
    entry = {"game_id": "g", "game": "skull", "seats": 3, "seats_taken": seats_taken, "status": status}
    return msgspec.json.encode({**entry, "practice": False, "version": version})


@pytest.fixture
def announcements(store_backend: Clients, index_backend: IndexClients) -> Any:
    client: redis.Redis = (index_backend or store_backend)[0]  # type: ignore[assignment]
    pubsub = client.pubsub()
    pubsub.subscribe(LOBBY_CHANNEL)
    confirmed = pubsub.get_message(timeout=5)
    assert confirmed is not None and confirmed["type"] == "subscribe"
    yield pubsub
    pubsub.close()


def received(pubsub: Any) -> list[bytes]:
    found = []
    while (message := pubsub.get_message(timeout=0.5)) is not None:
        found.append(message["data"])
    return found


def test_a_changed_summary_is_announced_and_a_new_version_alone_is_not(
    sync_store: SyncEventStore, announcements: Any
) -> None:
    sync_store.put_lobby("g", summary(2))
    sync_store.put_lobby("g", summary(3))  # a move: only the version changed
    sync_store.put_lobby("g", summary(4, seats_taken=1))
    sync_store.put_lobby("g", summary(9, seats_taken=3, status="playing"))
    sync_store.put_lobby("g", summary(10, seats_taken=3, status="playing"))
    assert received(announcements) == [summary(2), summary(4, 1), summary(9, 3, "playing")]
    assert sync_store.lobby(10) == [summary(10, 3, "playing")]  # the hash has every version


@pytest.mark.parametrize(
    ("before", "after", "changed"),
    [
        (None, summary(1), True),
        (summary(1), summary(2), False),
        (summary(1), summary(2, seats_taken=1), True),
        (b"opaque", b"opaque", False),  # the store does not require JSON
        (b"opaque", b"other", True),
        (b"[1]", b"[2]", True),
    ],
)
def test_lobby_changed_ignores_the_version_only(before: bytes | None, after: bytes, changed: bool) -> None:
    assert lobby_changed(before, after) is changed
