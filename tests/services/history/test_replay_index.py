"""The replay's table of contents: rounds and steps that partition a recorded stream the way people tell
a game (tricks, turns, Skull's phases), and every seat's moves.

The streams are whole random games recorded exactly as the server stores them; the checks compare the
cut with what the events themselves say (a trick step holds the ``trick_won`` of that trick number, a
turn step the ``cards_revealed`` of that turn) and the moves with the seats that really acted.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.games import game_names, spec
from domain.kernel import Command, Event
from services.history.records import Entry, decode_stored
from services.history.replay_index import SETUP_KIND, build_index
from tests.support.play import play_random
from tests.support.recorded import RecordedGame, new_recorded_game, table_setups

GAMES = game_names()


class _Logged(RecordedGame):
    """A recorded game that also notes, per command, the first version it appended and its seat."""

    moves: list[tuple[int, int]]

    def act(self, seat: int, command: Command | dict[str, Any]) -> list[Event]:
        self.moves.append((len(self.entries) + 1, seat))
        return super().act(seat, command)


def played(game: str, players: int, options: dict[str, Any], seed: int) -> _Logged:
    g = new_recorded_game(game, players, options, seed=seed)
    logged = _Logged(table=g.table, seeds=g.seeds, state=g.state, entries=g.entries, receipts=g.receipts)
    logged.moves = []
    play_random(logged, random.Random(seed))
    return logged


def events_of(entries: list[Entry]) -> dict[int, dict[str, Any]]:
    return {entry.version: msgspec.json.decode(decode_stored(entry.data).event) for entry in entries}


def assert_partition(spans: list[dict[str, Any]], head: int) -> None:
    """The spans cover versions 1..head in order, each once."""
    assert spans[0]["start"] == 1 and spans[-1]["end"] == head
    for before, after in itertools.pairwise(spans):
        assert after["start"] == before["end"] + 1, (before, after)
    assert all(span["start"] <= span["end"] for span in spans)


def test_every_registered_game_has_a_cut_whose_round_openings_also_open_a_step() -> None:
    for game in GAMES:
        cut = spec(game).replay_cut
        assert cut.round_opens <= set(cut.step_opens), game
        assert SETUP_KIND not in cut.step_opens.values()


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 10_000))
def test_rounds_and_steps_partition_a_whole_game_and_follow_its_round_numbers(
    game: str, data: st.DataObject, seed: int
) -> None:
    players, options = data.draw(table_setups(game))
    g = played(game, players, options, seed)
    head = g.entries[-1].version
    index = build_index(game, g.entries)
    assert_partition(index["rounds"], head)
    assert_partition(index["steps"], head)
    events = events_of(g.entries)

    assert [r["round"] for r in index["rounds"]] == list(range(len(index["rounds"])))
    assert index["steps"][0]["kind"] == SETUP_KIND and index["steps"][0]["round"] == 0
    for step in index["steps"]:
        within = next(r for r in index["rounds"] if r["start"] <= step["start"] <= r["end"])
        assert within["round"] == step["round"] and step["end"] <= within["end"]
        assert (step["kind"] == SETUP_KIND) == (step["round"] == 0)
    for round_ in index["rounds"][1:]:
        opening = events[round_["start"]]
        assert opening["type"] in spec(game).replay_cut.round_opens and opening["round"] == round_["round"]
    scored = [e["round"] for e in events.values() if e["type"] in spec(game).replay_cut.round_ends]
    assert [r["round"] for r in index["rounds"][1:]] == scored  # every round played, each once

    per_kind = Counter((s["round"], s["kind"]) for s in index["steps"])
    for step in index["steps"]:  # numbered 1..k within their round
        assert 1 <= step["n"] <= per_kind[(step["round"], step["kind"])]


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 10_000))
def test_each_move_is_the_first_version_of_a_command_and_names_the_seat_that_sent_it(
    game: str, data: st.DataObject, seed: int
) -> None:
    players, options = data.draw(table_setups(game))
    g = played(game, players, options, seed)
    index = build_index(game, g.entries)
    assert [(m["version"], m["seat"]) for m in index["moves"]] == g.moves
    assert {m["by"] for m in index["moves"]} == {"player"}


def steps_holding(index: dict[str, Any], events: dict[int, dict[str, Any]], kind: str, tag: str) -> list[Any]:
    """For each step of ``kind``: the events tagged ``tag`` inside it."""
    return [
        [events[v] for v in range(s["start"], s["end"] + 1) if events[v]["type"] == tag]
        for s in index["steps"]
        if s["kind"] == kind
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_skull_king_trick_step_holds_its_four_cards_and_the_trick_won_of_its_number(seed: int) -> None:
    g = played("skull-king", 4, {}, seed)
    index, events = build_index("skull-king", g.entries), events_of(g.entries)
    tricks = [s for s in index["steps"] if s["kind"] == "trick"]
    assert len(tricks) == sum(range(1, 11))  # round r has r tricks
    for step, won, played_ in zip(
        tricks,
        steps_holding(index, events, "trick", "trick_won"),
        steps_holding(index, events, "trick", "card_played"),
        strict=True,
    ):
        assert [w["trick"] for w in won] == [step["n"]]
        assert len(played_) == 4
        assert events[step["start"]]["type"] == "card_played"
    biddings = [s for s in index["steps"] if s["kind"] == "bidding"]
    assert [s["round"] for s in biddings] == list(range(1, 11))
    for bids in steps_holding(index, events, "bidding", "bid_placed"):
        assert len(bids) == 4


@pytest.mark.parametrize("options", [{"rounds": 2}, {"rounds": 1, "tactical": True}])
def test_a_six_nimmt_turn_step_holds_every_selection_and_the_reveal_of_its_number(
    options: dict[str, Any],
) -> None:
    g = played("six-nimmt", 3, options, 7)
    index, events = build_index("six-nimmt", g.entries), events_of(g.entries)
    turns = [s for s in index["steps"] if s["kind"] == "turn"]
    assert len(turns) == 10 * options["rounds"]
    for step, revealed, selected in zip(
        turns,
        steps_holding(index, events, "turn", "cards_revealed"),
        steps_holding(index, events, "turn", "card_selected"),
        strict=True,
    ):
        assert [r["turn"] for r in revealed] == [step["n"]]
        assert len(selected) == 3
    drafts = [s for s in index["steps"] if s["kind"] == "draft"]
    assert len(drafts) == (1 if options.get("tactical") else 0)


@pytest.mark.parametrize("seed", [4, 5])
def test_a_skull_round_is_placing_then_auction_then_challenge(seed: int) -> None:
    g = played("skull", 3, {}, seed)
    index, events = build_index("skull", g.entries), events_of(g.entries)
    for round_ in index["rounds"][1:]:
        kinds = [s["kind"] for s in index["steps"] if s["round"] == round_["round"]]
        assert kinds == ["placing", "auction", "challenge"], kinds
        steps = [s for s in index["steps"] if s["round"] == round_["round"]]
        assert events[steps[1]["start"]]["type"] == "bid_made"
        assert events[steps[2]["start"]]["type"] == "challenge_started"
