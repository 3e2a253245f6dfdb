"""The archive of finished games over HTTP: a finished game moved out of Redis into its archive file
answers every reader exactly as before (views, scores, events, replay, audit, export, players' pages,
ratings, disputes), shows no caller more than before, and still verifies against the public log
(``services.store.archive``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import redis
from starlette.testclient import TestClient

from services.api.app import create_app
from services.disputes.bundle import verify_bundle
from services.history.verify import verify_export
from services.operating.config import Settings
from services.store.archive import ArchivePolicy
from services.store.connection import connect_to
from services.store.embedded import EmbeddedRedis
from services.store.event_store import SyncEventStore
from services.store.keys import game_keys
from services.store.retention import HOUR_MS
from services.table.lifecycle import wall_clock_ms
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED, Api, bearer_only
from tests.api.test_accounts import rated_game, register
from workers.ratings import rebuilt_models, stored_models
from workers.stores import settings_archive
from workers.sweeper import archive
from workers.transparency import TransparencyLoop

OPERATOR = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


class Deployment:
    """One Redis (fakeredis or a real server) and one archive directory, and API processes made
    on them at will: a fresh one after archiving has none of the first one's caches."""

    def __init__(self, connect: Callable[[], Any], sync: redis.Redis, directory: Path) -> None:
        self.connect, self.sync = connect, sync
        self.settings = Settings(admin_token=ADMIN_TOKEN, archive_dir=str(directory), **UNLIMITED)
        self.archive = settings_archive(self.settings)
        self.store = SyncEventStore(sync, archive=self.archive)

    @contextmanager
    def api(self) -> Iterator[Api]:
        with TestClient(create_app(self.settings, self.connect), raise_server_exceptions=False) as client:
            client.headers["X-Request-ID"] = f"test-{uuid.uuid4().hex[:8]}"
            yield Api(bearer_only(client), self.sync)

    def log_heads(self) -> None:
        """The worker pool's public log: the projected heads appended, a checkpoint signed."""
        TransparencyLoop(self.store, self.settings.signing_key_name).pass_once()

    def archive_pass(self, hours_after: float = 25.0) -> list[str]:
        now = wall_clock_ms() + int(hours_after * HOUR_MS)
        return archive(self.store, self.archive, now, ArchivePolicy()).archived


@pytest.fixture(params=["fakeredis", pytest.param("redis", marks=pytest.mark.redis)])
def deployment(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Deployment]:
    directory = tmp_path / "archive"
    monkeypatch.setenv("TABLESTREAM_ARCHIVE_DIR", str(directory))  # the projection jobs' stores
    if request.param == "fakeredis":
        server = fakeredis.FakeServer()
        sync = fakeredis.FakeRedis(server=server)
        yield Deployment(
            lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
            sync,
            directory,
        )
    else:
        embedded: EmbeddedRedis = request.getfixturevalue("redis_server")
        sync = redis.Redis.from_url(embedded.url)
        sync.flushall()
        yield Deployment(connect_to(embedded.url), sync, directory)
    sync.close()


def answers(api: Api, game_id: str, paths: list[tuple[str, dict[str, str]]]) -> list[tuple[int, Any]]:
    """Each path's status and body (JSON, else text), as the caller of its headers sees it."""
    found = []
    for path, headers in paths:
        response = api.client.get(path, headers=headers)
        kind = response.headers.get("content-type", "")
        body = response.json() if "json" in kind else response.text
        if isinstance(body, dict) and isinstance(body.get("clock"), dict):
            body["clock"].pop("now_ms")  # the time of the answer, not of the game
        if isinstance(body, dict):
            body.pop("next_checkpoint", None)  # the public log's next signing, from the clock
        found.append((response.status_code, body))
    return found


def callers(api: Api, game_id: str, accounts: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Everyone who may ask: a spectator, each seat, the host, an account, a token of nothing."""
    seats = [api.auth(game_id, seat) for seat in range(len(api.tokens[game_id]))]
    return [
        {},
        *seats,
        {"Authorization": f"Bearer {api.hosts[game_id]}"},
        {"Authorization": f"Bearer {accounts[0]['token']}"},
        {"Authorization": "Bearer not-a-token-of-this-table"},
    ]


def game_paths(game_id: str, head: int, asking: list[dict[str, str]]) -> list[tuple[str, dict[str, str]]]:
    per_caller = [
        f"/games/{game_id}/view",
        f"/games/{game_id}/view?at=3",
        f"/games/{game_id}/events?limit=1000",
        f"/games/{game_id}/events?after=5&limit=7&lang=en",
        f"/games/{game_id}/scores",
        f"/games/{game_id}/audit",
        f"/games/{game_id}/replay/index",
    ]
    shared = [
        f"/games/{game_id}/replay",
        f"/games/{game_id}/replay?at=1",
        f"/games/{game_id}/replay?at={head // 2}",
        f"/games/{game_id}/export",
        f"/games/{game_id}/log",
        f"/games/{game_id}/disputes",
    ]
    return (
        [(path, headers) for path in per_caller for headers in asking]
        + [(p, {}) for p in shared]
        + [
            (f"/games/{game_id}/audit", OPERATOR),
            (f"/games/{game_id}/disputes", OPERATOR),
        ]
    )


def account_paths(accounts: list[dict[str, Any]]) -> list[tuple[str, dict[str, str]]]:
    paths: list[tuple[str, dict[str, str]]] = [("/leaderboards/six-nimmt", {})]
    for account in accounts:
        paths += [
            (f"/accounts/{account['account_id']}", {}),
            (f"/accounts/{account['account_id']}/history", {}),
        ]
    return paths


@pytest.mark.thorough
def test_an_archived_game_answers_every_reader_and_every_caller_exactly_as_before_and_leaves_redis(
    deployment: Deployment,
) -> None:
    with deployment.api() as api:
        accounts = [register(api, name) for name in ("Ada", "Bob", "Cyd")]
        game_id = rated_game(api, [a["token"] for a in accounts], seed=4)
        other = rated_game(api, [a["token"] for a in accounts], seed=5)  # a second game stays as it was
        deployment.log_heads()
        disputed = api.client.post(
            f"/games/{game_id}/disputes", json={"round": 1, "text": "Round 1?"}, headers=api.auth(game_id, 1)
        ).json()
        path = f"/games/{game_id}/disputes/{disputed['dispute_id']}"
        resolved = api.client.post(
            f"{path}/resolve", json={"verdict": "rejected", "reason": "It checks."}, headers=OPERATOR
        )
        assert resolved.status_code == 200, resolved.text
        head = api.head(game_id)
        asking = callers(api, game_id, accounts)
        paths = [
            *game_paths(game_id, head, asking),
            *account_paths(accounts),
            (path, api.auth(game_id, 1)),
            (f"{path}/bundle", api.auth(game_id, 1)),
            (f"{path}/verdict", api.auth(game_id, 1)),
        ]
        before = answers(api, game_id, paths)
        tokens, hosts = api.tokens, api.hosts
    models = stored_models(deployment.store)
    assert all(status == 200 for status, _ in before[: 1 + len(tokens[game_id])])  # spectator and seats

    assert deployment.archive_pass(hours_after=23) == []  # not due yet
    assert sorted(deployment.archive_pass()) == sorted([game_id, other])
    k = game_keys(game_id)
    assert not deployment.sync.exists(k.events, k.secret, k.views, k.seat_commands)
    assert deployment.archive.path_of(game_id).is_file()

    with deployment.api() as fresh:  # another API process: nothing of the game in its memory
        fresh.tokens, fresh.hosts = tokens, hosts
        after = answers(fresh, game_id, paths)
        for (where, headers), was, now in zip(paths, before, after, strict=True):
            assert now == was, f"{where} as {headers} answers differently once archived"
        export = fresh.client.get(f"/games/{game_id}/export").json()
        report = verify_export(export)
        assert report.ok, report.render()
        assert export["log"]["leaves"], "the archived game's heads are proven by the public log"
        again = fresh.client.post(
            f"/games/{game_id}/disputes", json={"round": 1, "text": "Again."}, headers=fresh.auth(game_id, 0)
        )
        assert again.status_code == 201, again.text
        bundle = fresh.client.get(
            f"/games/{game_id}/disputes/{again.json()['dispute_id']}/bundle", headers=fresh.auth(game_id, 0)
        )
        assert bundle.status_code == 200 and verify_bundle(bundle.json()).ok
    assert rebuilt_models(deployment.store) == models == stored_models(deployment.store)


@pytest.mark.thorough
def test_a_game_with_an_open_dispute_stays_in_redis_until_it_is_resolved(deployment: Deployment) -> None:
    with deployment.api() as api:
        accounts = [register(api, name) for name in ("Ada", "Bob")]
        game_id = rated_game(api, [a["token"] for a in accounts], seed=2)
        opened = api.client.post(
            f"/games/{game_id}/disputes", json={"round": 1, "text": "Hm."}, headers=api.auth(game_id, 0)
        ).json()
        assert deployment.archive_pass() == []
        assert deployment.sync.exists(game_keys(game_id).events)
        path = f"/games/{game_id}/disputes/{opened['dispute_id']}/resolve"
        body = {"verdict": "rejected", "reason": "Fine."}
        assert api.client.post(path, json=body, headers=OPERATOR).status_code == 200
    assert deployment.archive_pass() == [game_id]
    assert not deployment.sync.exists(game_keys(game_id).events)
