"""The bookkeeping of ``services.api.view_cache.ViewCache``, against a stand-in hub: what may be kept,
and when it is dropped. (Against Redis, with real processes' announcements: tests/api/test_view_cache.)"""

from __future__ import annotations

import pytest

from services.api.view_cache import SPECTATOR, ViewCache, viewer_of
from services.history.folding import Folded
from services.table.callers import Caller, TokenCheck
from services.table.queries import ViewParts

pytestmark = pytest.mark.anyio


class Hub:
    """A live hub stand-in: games are confirmed once watched (unless told otherwise), fences pass
    unless told to fail, and ``announce`` plays a message arriving during a fence."""

    def __init__(self) -> None:
        self.watched: list[str] = []
        self.unwatched: list[str] = []
        self.unconfirmed: set[str] = set()
        self.fences_fail = False
        self.announce_during_fence: str | None = None
        self.on_change = None

    def watch(self, game_id: str) -> None:
        self.watched.append(game_id)

    def unwatch(self, game_id: str) -> None:
        self.unwatched.append(game_id)

    def confirmed(self, game_id: str) -> bool:
        return game_id in self.watched and game_id not in self.unconfirmed

    async def fence(self, game_id: str) -> bool:
        if self.announce_during_fence is not None:
            assert self.on_change is not None
            self.on_change(self.announce_during_fence)
        return not self.fences_fail


def parts(data: bytes) -> ViewParts:
    return ViewParts(data, Folded.__new__(Folded), {})


def cache_of(hub: Hub, games: int = 8) -> ViewCache:
    return ViewCache(hub, games)  # type: ignore[arg-type]


async def kept_view(cache: ViewCache, game_id: str, viewer: str, data: bytes) -> None:
    """Read ``game_id`` twice as a fresh process would: the first read watches it, the second keeps."""
    cache.keep(game_id, cache.ticket(game_id), viewer, parts(b"first"))
    cache.keep(game_id, cache.ticket(game_id), viewer, parts(data))


async def test_a_game_read_for_the_first_time_is_watched_and_its_next_read_is_kept() -> None:
    hub = Hub()
    cache = cache_of(hub)
    assert cache.ticket("g") is None
    cache.keep("g", None, SPECTATOR, parts(b"1"))
    assert hub.watched == ["g"] and await cache.get("g", SPECTATOR) is None
    cache.keep("g", cache.ticket("g"), SPECTATOR, parts(b"2"))
    kept = await cache.get("g", SPECTATOR)
    assert kept is not None and kept.data == b"2"
    assert (cache.hits, cache.misses) == (1, 1)


async def test_a_read_is_not_kept_when_its_game_changed_after_the_ticket() -> None:
    hub = Hub()
    cache = cache_of(hub)
    cache.keep("g", None, SPECTATOR, parts(b"1"))
    ticket = cache.ticket("g")
    cache.changed("g")  # a message arrived while the read was on its way
    cache.keep("g", ticket, SPECTATOR, parts(b"old"))
    assert await cache.get("g", SPECTATOR) is None


async def test_nothing_is_kept_before_the_games_subscription_is_confirmed() -> None:
    hub = Hub()
    hub.unconfirmed.add("g")
    cache = cache_of(hub)
    await kept_view(cache, "g", SPECTATOR, b"2")
    assert cache.ticket("g") is None and await cache.get("g", SPECTATOR) is None


async def test_a_change_drops_every_view_of_its_game_and_only_of_its_game() -> None:
    hub = Hub()
    cache = cache_of(hub)
    for game_id in ("g", "h"):
        await kept_view(cache, game_id, SPECTATOR, b"s")
        await kept_view(cache, game_id, "digest:0", b"0")
    cache.changed("g")
    assert await cache.get("g", SPECTATOR) is None and await cache.get("g", "digest:0") is None
    assert await cache.get("h", SPECTATOR) is not None and await cache.get("h", "digest:0") is not None


async def test_a_view_is_not_served_when_the_fence_fails_or_a_change_arrives_before_it_passes() -> None:
    hub = Hub()
    cache = cache_of(hub)
    await kept_view(cache, "g", SPECTATOR, b"s")
    hub.fences_fail = True
    assert await cache.get("g", SPECTATOR) is None
    hub.fences_fail = False
    hub.announce_during_fence = "g"
    assert await cache.get("g", SPECTATOR) is None
    hub.announce_during_fence = None
    assert await cache.get("g", SPECTATOR) is None  # the change dropped it


async def test_the_least_recently_read_game_is_dropped_and_unwatched_past_the_capacity() -> None:
    hub = Hub()
    cache = cache_of(hub, games=2)
    await kept_view(cache, "a", SPECTATOR, b"a")
    await kept_view(cache, "b", SPECTATOR, b"b")
    assert await cache.get("a", SPECTATOR) is not None  # "b" is now the least recently read
    await kept_view(cache, "c", SPECTATOR, b"c")
    assert hub.unwatched == ["b"] and len(cache) == 2
    assert await cache.get("b", SPECTATOR) is None and await cache.get("a", SPECTATOR) is not None


async def test_a_cache_of_no_games_keeps_nothing_and_watches_nothing() -> None:
    hub = Hub()
    cache = cache_of(hub, games=0)
    await kept_view(cache, "g", SPECTATOR, b"s")
    assert hub.watched == [] and await cache.get("g", SPECTATOR) is None


def test_only_remembered_tokens_and_spectators_have_kept_views() -> None:
    check = TokenCheck("g", "abc", "2")
    assert viewer_of(Caller("seat", 2, check)) == "abc:2"
    assert viewer_of(Caller("host", None, TokenCheck("g", "def", "host"))) == "def:host"
    assert viewer_of(Caller("spectator")) == SPECTATOR
    assert viewer_of(Caller("seat", 2)) is None  # identified afresh: its next read is assumed
    assert viewer_of(Caller("operator")) is None


async def test_resizing_to_no_games_drops_and_unwatches_every_game_until_it_grows_again() -> None:
    hub = Hub()
    cache = cache_of(hub, games=4)
    await kept_view(cache, "a", SPECTATOR, b"a")
    await kept_view(cache, "b", SPECTATOR, b"b")
    cache.resize(0)
    assert sorted(hub.unwatched) == ["a", "b"] and len(cache) == 0 and cache.capacity == 0
    await kept_view(cache, "a", SPECTATOR, b"a")
    assert await cache.get("a", SPECTATOR) is None
    cache.resize(4)
    await kept_view(cache, "a", SPECTATOR, b"a")
    assert await cache.get("a", SPECTATOR) is not None
