"""A seat's live stream resumed from before the seat's own join (``Last-Event-ID: 0`` above all, what
an ``EventSource`` sends after a page of an old table reconnects): every version from that point,
each as the seat may see it, then the live ones; never an empty answer that ends at once."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from tests.api.conftest import Api, practice
from tests.api.test_full_game import parse_sse

SKULL_KING_SEED = 4


def seated(api: Api, game_id: str, name: str) -> str:
    joined = api.client.post(f"/games/{game_id}/players", json={"name": name})
    assert joined.status_code == 201, joined.text
    token: str = joined.json()["token"]
    return token


def resumed(api: Api, game_id: str, token: str, last_event_id: int) -> list[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {token}", "Last-Event-ID": str(last_event_id)}
    with api.client.stream("GET", f"/games/{game_id}/live", headers=headers) as response:
        assert response.status_code == 200
        return parse_sse(response.iter_lines())


def without_clock(view: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in view.items() if key != "clock"}


@pytest.mark.thorough
@pytest.mark.parametrize("last_event_id", [0, 1, 2])
def test_a_seat_resuming_from_before_its_join_gets_every_version_as_it_may_see_it(
    api: Api, last_event_id: int
) -> None:
    game_id = api.create("skull-king", 2, **practice("skull-king", SKULL_KING_SEED))
    api.tokens[game_id] = [seated(api, game_id, "Ada")]
    joined_at = api.head(game_id) + 1
    api.tokens[game_id].append(seated(api, game_id, "Bo"))
    final = api.play_until(game_id, lambda view: view["status"] == "finished", seed=SKULL_KING_SEED)

    messages = resumed(api, game_id, api.tokens[game_id][1], last_event_id)

    assert [m["id"] for m in messages] == list(range(last_event_id + 1, final["version"] + 1))
    for message in messages:
        version, shown = message["id"], msgspec.json.decode(message["data"])
        eyes = 1 if version >= joined_at else None  # before Bo sat down, the table as anyone saw it
        expected = api.view(game_id, eyes, at=version)
        assert without_clock(shown) == without_clock(expected), version
    assert msgspec.json.decode(messages[-1]["data"])["status"] == "finished"


@pytest.mark.thorough
def test_a_seat_that_changed_hands_while_waiting_never_shows_the_former_players_eyes(api: Api) -> None:
    game_id = api.create("skull-king", 2, **practice("skull-king", SKULL_KING_SEED + 1))
    former = seated(api, game_id, "Cy")
    assert api.client.post(
        f"/games/{game_id}/leave", json={}, headers={"Authorization": f"Bearer {former}"}
    ).json() == {"seat": 0}
    joined_at = api.head(game_id) + 1
    api.tokens[game_id] = [seated(api, game_id, "Ada"), seated(api, game_id, "Bo")]
    final = api.play_until(game_id, lambda view: view["status"] == "finished", seed=5)

    messages = resumed(api, game_id, api.tokens[game_id][0], 0)

    assert [m["id"] for m in messages] == list(range(1, final["version"] + 1))
    seats = {m["id"]: msgspec.json.decode(m["data"])["seat"] for m in messages}
    assert {seats[v] for v in range(1, joined_at)} == {None}  # Cy's time in the seat: a spectator's view
    assert {seats[v] for v in range(joined_at, final["version"] + 1)} == {0}
