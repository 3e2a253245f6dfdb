"""``GET /metrics``: operator-only, Prometheus text that the client library's own parser reads, and
counters that follow a game played in this process (the multiprocess case: test_metrics_processes)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import fakeredis
import pytest
from prometheus_client.parser import text_string_to_metric_families
from rq.serializers import JSONSerializer

from bots import choose
from domain.games import game_names, spec
from services.store.queue import bot_queue, enqueue_handovers, lifecycle_queue, projection_queue
from services.store.rq_workers import PipelinedWorker
from services.telemetry import metrics
from tests.api.conftest import ADMIN_TOKEN, Api
from tests.support.promql import family_of, named_metrics
from workers import lifecycle

OPERATOR = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def samples(api: Api) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = api.client.get("/metrics", headers=OPERATOR)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    found = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def play(api: Api, game_id: str, moves: int, seed: int) -> int:
    """Bots play the first seat to act, projecting after each move; returns the moves sent."""
    rng = random.Random(seed)
    sent = 0
    while sent < moves:
        api.project()
        view = api.view(game_id)
        assert view["status"] == "playing"
        seat = view["to_act"][0]
        own = api.view(game_id, seat)
        response = api.send(game_id, seat, choose(own["game"], own, rng), expected_version=own["version"])
        assert response.status_code == 200, response.text
        sent += 1
    api.project()
    return sent


def value(found: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture(autouse=True)
def fresh_metrics() -> Iterator[None]:
    """Each test counts from zero in this process's memory (no multiprocess directory)."""
    metrics.prepare_directory(owner=False)
    yield
    metrics.prepare_directory(owner=False)


def test_the_metrics_are_refused_without_the_operators_token_with_a_code(fake_api: Api) -> None:
    missing = fake_api.client.get("/metrics")
    assert missing.status_code == 401
    assert missing.json()["error"]["code"] == "operator_only"
    game_id = fake_api.create()
    wrong = fake_api.client.get("/metrics", headers={"Authorization": f"Bearer {fake_api.hosts[game_id]}"})
    assert wrong.status_code == 403
    assert wrong.json()["error"]["code"] == "operator_only"


@pytest.mark.thorough
def test_the_metrics_parse_and_count_commands_requests_and_tables_of_a_game_played(fake_api: Api) -> None:
    game_id = fake_api.started()
    sent = play(fake_api, game_id, moves=8, seed=3)
    rejected = fake_api.send(game_id, 0, {"type": "no_such_command"})
    assert rejected.status_code == 422

    found = samples(fake_api)
    ok = value(found, "tablestream_commands_total", game="skull", outcome="ok")
    assert ok == sent
    assert value(found, "tablestream_commands_total", game="skull", outcome="rejected") == 1
    route = "/games/{game_id}/commands"
    assert value(found, "tablestream_http_requests_total", route=route, method="POST", status="2xx") == ok
    assert (
        value(found, "tablestream_http_request_duration_seconds_count", route=route, method="POST") == ok + 1
    )
    assert value(found, "tablestream_tables", status="running") == 1
    assert 0 <= value(found, "tablestream_oldest_unsettled_game_seconds") < 60  # a refused command marks too
    assert value(found, "tablestream_queue_depth", queue="projections") == 0
    assert value(found, "tablestream_queue_oldest_job_seconds", queue="projections") == 0  # none waits
    assert value(found, "tablestream_redis_round_trips_total", role="api") > ok
    assert value(found, "tablestream_drain_games_total") >= 1
    # projected in process here: no consumer thread is connected, which the scrape says as +Inf
    assert value(found, "tablestream_handover_consumer_idle_seconds") == float("inf")
    # no label carries a game id: routes are templates
    assert not any(game_id in str(labels) for _, labels in found)


def test_refusals_by_a_rate_limit_and_failed_logins_are_counted(fake_api: Api) -> None:
    registered = fake_api.client.post("/accounts", json={"name": "Metered", "password": "long enough pass"})
    assert registered.status_code == 201, registered.text
    for _ in range(2):
        wrong = fake_api.client.post("/accounts/login", json={"name": "Metered", "password": "not the one"})
        assert wrong.status_code == 401
    found = samples(fake_api)
    assert value(found, "tablestream_login_failures_total") == 2
    assert (
        value(found, "tablestream_http_requests_total", route="/accounts/login", method="POST", status="4xx")
        == 2
    )


def test_every_metric_the_dashboard_and_the_alerts_read_is_in_the_metrics_of_a_game_played(
    fake_api: Api,
) -> None:
    game_id = fake_api.started()
    play(fake_api, game_id, moves=3, seed=5)
    found = samples(fake_api)
    families = {family_of(name) for name, _ in found}
    missing = {
        name
        for name in named_metrics()
        if name not in {n for n, _ in found} and family_of(name) not in families
    }
    assert missing == set(), sorted(missing)


def test_bot_moves_takeovers_by_the_host_and_on_leaving_and_the_workers_jobs_and_lags_are_counted(
    fake_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = fake_api.sync.connection_pool.connection_kwargs["server"]
    monkeypatch.setattr(lifecycle, "async_client_for", lambda sync: fakeredis.FakeAsyncRedis(server=server))

    def run_jobs() -> None:
        queues = [projection_queue(fake_api.sync), lifecycle_queue(fake_api.sync), bot_queue(fake_api.sync)]
        enqueue_handovers(queues[0])  # the consumer's pass, as a job: the worker's consumer, in process
        PipelinedWorker(queues, connection=fake_api.sync, serializer=JSONSerializer).work(
            burst=True, logging_level="WARNING"
        )

    game_id = fake_api.create("skull", 3)
    fake_api.join(game_id, "Ada")
    fake_api.join(game_id, "Bo")
    host = {"Authorization": f"Bearer {fake_api.hosts[game_id]}"}
    assert fake_api.client.post(f"/games/{game_id}/bots", json={}, headers=host).status_code == 200
    run_jobs()  # the bot of seat 2 places its first disc
    left = fake_api.client.post(f"/games/{game_id}/leave", json={}, headers=fake_api.auth(game_id, 0))
    assert left.status_code == 200, left.text
    run_jobs()  # a bot plays seat 0 from now on

    found = samples(fake_api)
    assert value(found, "tablestream_takeovers_total", game="skull", reason="left") == 1
    assert value(found, "tablestream_takeovers_total", game="skull", reason="host") == 1  # the bot of seat 2
    assert value(found, "tablestream_takeovers_total", game="skull", reason="timeouts") == 0
    assert value(found, "tablestream_bot_moves_total", game="skull") >= 2
    assert value(found, "tablestream_jobs_total", queue="bots", kind="play_bot", outcome="ok") >= 2
    assert (
        value(found, "tablestream_jobs_total", queue="projections", kind="project_handovers", outcome="ok")
        >= 1
    )
    assert (
        value(found, "tablestream_projection_lag_seconds_count") >= 1
    )  # each game a consumer's batch projected
    assert value(found, "tablestream_job_lag_seconds_count", queue="bots") >= 2
    assert not any(name == "tablestream_jobs_total" and "job" in dict(labels) for name, labels in found)
    for queue in ("projections", "lifecycle", "bots", "review"):
        assert value(found, "tablestream_queue_depth", queue=queue) == 0


@pytest.mark.parametrize("game", game_names())
def test_every_games_commands_are_counted_under_its_own_name_never_other(fake_api: Api, game: str) -> None:
    game_id = fake_api.started(game, spec(game).min_players)
    sent = play(fake_api, game_id, moves=3, seed=5)
    found = samples(fake_api)
    assert value(found, "tablestream_commands_total", game=game, outcome="ok") == sent
    assert value(found, "tablestream_commands_total", game="other", outcome="ok") == 0
    assert ("tablestream_bot_moves_total", (("game", game),)) in found  # its series exist from the start


def test_every_route_and_method_has_its_5xx_series_at_zero_before_any_request(fake_api: Api) -> None:
    found = samples(fake_api)  # the first request of this app
    fives = {
        (labels["route"], labels["method"])
        for (name, pairs) in found
        for labels in [dict(pairs)]
        if name == "tablestream_http_requests_total" and labels["status"] == "5xx"
    }
    for pair in [
        ("/games/{game_id}/commands", "POST"),
        ("/games", "POST"),
        ("/healthz", "GET"),
        ("/livez", "GET"),
    ]:
        assert pair in fives
        assert (
            value(found, "tablestream_http_requests_total", route=pair[0], method=pair[1], status="5xx") == 0
        )
    assert len(fives) >= 40  # every route of the app, not only those named above
    for path in ("fast", "fallback", "load"):
        assert ("tablestream_command_paths_total", (("path", path),)) in found
