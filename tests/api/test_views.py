"""Reading over HTTP: views from the projections, read-your-writes, time travel, redacted events."""

from __future__ import annotations

from tests.api.conftest import ADMIN_TOKEN, Api

FLOWER = {"type": "place_disc", "disc": "flower"}
SKULL = {"type": "place_disc", "disc": "skull"}


def test_a_view_always_has_the_contract_fields(api: Api) -> None:
    game_id = api.started()
    for seat in (None, 0):
        view = api.view(game_id, seat)
        for name in (
            "game",
            "game_id",
            "version",
            "status",
            "phase",
            "seat",
            "players",
            "to_act",
            "legal",
            "scores",
            "winners",
        ):
            assert name in view
        assert view["seat"] == seat
    assert api.view(game_id)["legal"] == []
    assert {"type": "place_disc", "disc": "skull"} in api.view(game_id, 0)["legal"]


def test_a_seat_reads_its_own_write_before_any_projection_ran(api: Api) -> None:
    game_id = api.started()
    version = api.send(game_id, 0, FLOWER).json()["version"]
    view = api.view(game_id, 0)  # no worker has run: the projection lags
    assert view["version"] >= version
    assert 0 not in view["to_act"]


def test_views_come_from_the_projection_once_it_caught_up(api: Api) -> None:
    game_id = api.started()
    api.send(game_id, 0, FLOWER)
    api.project()
    checkpoint = int(api.sync.hget(f"ts:{{{game_id}}}:views", "checkpoint"))
    assert checkpoint == api.head(game_id)
    assert api.view(game_id)["version"] == checkpoint


def test_a_duplicate_or_late_poke_changes_no_view(api: Api) -> None:
    game_id = api.started()
    api.send(game_id, 0, FLOWER)
    api.project()
    before = api.sync.hgetall(f"ts:{{{game_id}}}:views")
    from services.store.queue import enqueue_projection, projection_queue

    for _ in range(3):
        enqueue_projection(projection_queue(api.sync), game_id)
    api.project()
    assert api.sync.hgetall(f"ts:{{{game_id}}}:views") == before


def test_time_travel_shows_the_view_as_it_was_at_that_version(api: Api) -> None:
    game_id = api.started()
    start = api.head(game_id)
    api.send(game_id, 0, SKULL)
    api.send(game_id, 1, FLOWER)
    past = api.view(game_id, 0, at=start)
    assert past["version"] == start
    assert 0 in past["to_act"] and 1 in past["to_act"]
    now = api.view(game_id, 0)
    assert now["to_act"] == [2]
    assert api.client.get(f"/games/{game_id}/view", params={"at": 10_000}).status_code == 422
    assert api.client.get(f"/games/{game_id}/view", params={"at": "x"}).status_code == 422


def test_events_hide_other_seats_discs_until_the_game_is_over(api: Api) -> None:
    game_id = api.started()
    api.send(game_id, 0, SKULL)
    api.send(game_id, 1, FLOWER)

    def placed(seat: int | None) -> dict[int, str | None]:
        headers = api.auth(game_id, seat) if seat is not None else {}
        events = api.client.get(f"/games/{game_id}/events", headers=headers).json()["events"]
        return {e["seat"]: e["disc"] for e in events if e["type"] == "disc_placed"}

    assert placed(0) == {0: "skull", 1: None}
    assert placed(1) == {0: None, 1: "flower"}
    assert placed(2) == {0: None, 1: None}
    assert placed(None) == {0: None, 1: None}
    operator = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    events = api.client.get(f"/games/{game_id}/events", headers=operator).json()["events"]
    assert {e["seat"]: e["disc"] for e in events if e["type"] == "disc_placed"} == {0: "skull", 1: "flower"}


def test_events_page_contiguously_and_reproduce_the_stream(api: Api) -> None:
    game_id = api.started()
    for seat in range(3):
        api.send(game_id, seat, FLOWER)
    head = api.head(game_id)
    paged, after = [], 0
    while after < head:
        page = api.client.get(f"/games/{game_id}/events", params={"after": after, "limit": 2}).json()
        assert len(page["events"]) <= 2
        paged.extend(page["events"])
        after = page["events"][-1]["version"]
    assert [e["version"] for e in paged] == list(range(1, head + 1))
    whole = api.client.get(f"/games/{game_id}/events", params={"limit": 1000}).json()["events"]
    assert whole == paged


def test_the_scoreboard_is_served_for_a_running_game(api: Api) -> None:
    game_id = api.started()
    api.project()
    board = api.client.get(f"/games/{game_id}/scores").json()
    assert board["totals"] == [0, 0, 0]
    assert "rounds" in board


def test_openapi_describes_every_route_and_every_game_command(api: Api) -> None:
    doc = api.client.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1")  # Swagger UI (/docs) renders 3.0 and 3.1
    for path in (
        "/games",
        "/games/{game_id}/players",
        "/games/{game_id}/commands",
        "/games/{game_id}/view",
        "/games/{game_id}/events",
        "/games/{game_id}/scores",
        "/games/{game_id}/live",
    ):
        assert path in doc["paths"]
    text = api.client.get("/openapi.json").text
    for tag in ("place_disc", "select_card", "play_card", "choose_row", "discard_pick"):
        assert tag in text
