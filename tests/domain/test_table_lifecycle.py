"""The online lifecycle in the table Decider: timeouts with each game's documented default, takeovers
by bots, leaving, expiry, and the verifier accepting all of it (and still every old stream)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.fairness import Chance
from domain.games import specs
from domain.kernel import Conflict
from domain.six_nimmt.cards import bullheads_of
from domain.skull.commands import ChooseFirstPlayer, DiscardOwn
from domain.table import BotTookOver, SeatLeft, SeedRevealed, TableExpired, TurnTimedOut
from services.history.export import build_export
from services.history.folding import advance
from services.history.records import decode_stored
from services.history.verify import parse_entries, verify_export
from tests.support.online import TIMERS, leave, online_game, play_online, time_out, timed_out_with
from tests.support.recorded import RecordedGame
from tests.support.samples import option_variants

GOLDEN = Path(__file__).parent.parent / "support" / "golden"
GAMES = [  # every game at its default table, with each value of each of its boolean and choice options
    (game.name, game.default_players, options) for game in specs() for options in option_variants(game.name)
]


def _until(g: RecordedGame, reached: Callable[[RecordedGame], bool], rng: random.Random) -> bool:
    """Play random own commands until ``reached`` holds for the state (False if the game ends first)."""
    while g.state.status == "playing":
        if reached(g):
            return True
        seat = rng.choice(sorted(g.table.to_act(g.state)))
        g.act(seat, rng.choice(g.legal(seat)))
    return False


def _reach(game: str, players: int, options: dict[str, Any], phase: str) -> tuple[RecordedGame, int]:
    for seed in range(200):
        g = online_game(game, players, options, seed=seed)
        if _until(g, lambda g: g.table.rules.phase(g.state.game_state) == phase, random.Random(seed)):
            return g, g.table.to_act(g.state)[0]
    raise AssertionError(f"no game of 200 reached {phase}")


def _verified(g: RecordedGame) -> None:
    report = verify_export(build_export(g.entries))
    assert report.ok, report.render()


def _recorded_command(g: RecordedGame) -> dict[str, Any]:
    first = next(decode_stored(e.data) for e in reversed(g.entries) if decode_stored(e.data).command)
    assert first.command is not None and first.command.kind == "timeout"
    return first.command.body


def test_a_timed_out_row_choice_takes_the_row_with_fewest_bullheads_then_the_lowest_index() -> None:
    g, seat = _reach("six-nimmt", 4, {}, "choosing_row")
    rows = g.state.game_state.rows
    expected = min(range(4), key=lambda r: (bullheads_of(rows[r]), r))
    events = time_out(g, seat, random.Random(0))
    assert isinstance(events[0], TurnTimedOut) and events[0].seat == seat
    assert _recorded_command(g) == {"type": "choose_row", "row": expected}


def test_a_timed_out_tactical_draft_takes_the_lowest_card_of_the_pool() -> None:
    g, seat = _reach("six-nimmt", 3, {"tactical": True}, "drafting")
    lowest = min(g.state.game_state.pool)
    time_out(g, seat, random.Random(0))
    assert _recorded_command(g) == {"type": "draft_card", "card": lowest}


def test_a_timed_out_own_skull_discard_loses_a_disc_drawn_from_the_rounds_seed() -> None:
    g, seat = _reach("skull", 3, {}, "discard_own")
    gs = g.state.game_state
    owned = gs.seats[seat].owned
    chance = Chance(g.seeds, bytes.fromhex(g.state.mix or ""))
    expected = owned[chance.uniform(gs.round, "timeout-discard", len(owned))]
    events = time_out(g, seat, random.Random(0))
    assert _recorded_command(g) == {"type": "discard_own", "disc": expected}
    assert events[0] == TurnTimedOut(seat=seat, withheld_round=gs.round)
    assert not any(isinstance(e, SeedRevealed) and e.round >= gs.round for e in events)


def test_a_timed_out_eliminated_challenger_names_his_left_neighbour() -> None:
    g, seat = _reach("skull", 3, {}, "choose_first_player")
    expected = g.state.game_state.next_active(seat)
    time_out(g, seat, random.Random(0))
    assert _recorded_command(g) == {"type": "choose_first_player", "seat": expected}
    assert g.state.game_state.first_player == expected


def test_the_round_of_a_random_default_discard_stays_sealed_until_the_game_ends() -> None:
    g, seat = _reach("skull", 3, {}, "discard_own")
    sealed = g.state.game_state.round
    time_out(g, seat, random.Random(0))
    play_online(g, random.Random(1), timeout_share=0.0, leave_share=0.0)
    reveals = [(i, e) for i, e in enumerate(g.events) if isinstance(e, SeedRevealed) and e.round >= sealed]
    finished_at = len(g.events) - 1
    assert reveals and all(i > finished_at - len(reveals) - 1 for i, _ in reveals)
    _verified(g)


def test_a_timeout_that_is_not_the_named_default_fails_verification() -> None:
    g, seat = _reach("skull", 3, {}, "choose_first_player")
    default = g.state.game_state.next_active(seat)
    other = next(s for s in g.state.game_state.active() if s != default)
    timed_out_with(g, seat, ChooseFirstPlayer(seat=other))
    play_online(g, random.Random(2), timeout_share=0.0, leave_share=0.0)
    report = verify_export(build_export(g.entries))
    assert not report.ok
    assert any("not the default" in failure for failure in report.failures())


def test_a_seat_missing_takeover_after_turns_in_a_row_is_taken_over_by_a_bot() -> None:
    g = online_game("skull-king", 3, seed=5, timers={**TIMERS, "takeover_after": 2})
    seat = g.table.to_act(g.state)[0]
    first = time_out(g, seat, random.Random(0))
    assert not any(isinstance(e, BotTookOver) for e in first) and seat not in g.state.bots
    _until(g, lambda g: seat in g.table.to_act(g.state) and g.state.timing_out is None, random.Random(1))
    second = time_out(g, seat, random.Random(0))
    assert BotTookOver(seat=seat, reason="timeouts") in second
    assert seat in g.state.bots
    with pytest.raises(Conflict) as refused:
        g.table.decide(g.state, DiscardOwn(disc="flower"), seat, g.seeds)
    assert refused.value.code == "seat_taken_over"


def test_a_seats_own_turn_ends_its_run_of_timeouts() -> None:
    g = online_game("skull-king", 3, seed=6, timers={**TIMERS, "takeover_after": 2})
    seat = g.table.to_act(g.state)[0]
    time_out(g, seat, random.Random(0))
    assert g.state.streaks[seat] == 1
    rng = random.Random(3)
    _until(g, lambda g: seat in g.table.to_act(g.state), rng)
    g.act(seat, g.legal(seat)[0])
    assert g.state.streaks[seat] == 0


def test_leaving_during_play_hands_the_seat_to_a_bot_at_once() -> None:
    g = online_game("skull", 3, seed=1)
    assert leave(g, 1) == [SeatLeft(seat=1), BotTookOver(seat=1, reason="left")]
    assert 1 in g.state.bots and 1 in g.state.left
    play_online(g, random.Random(1), timeout_share=0.0, leave_share=0.0)
    _verified(g)


def test_leaving_a_waiting_table_frees_the_seat_for_the_next_join() -> None:
    g = _waiting("skull", 4)
    for name in ("Ada", "Bart"):
        g.apply(g.table.join(g.state, name, "", g.seeds))
    g.apply(g.table.leave(g.state, 0))
    assert [p.seat for p in g.state.seated] == [1] and g.state.left == frozenset()
    joined = g.table.join(g.state, "Cleo", "", g.seeds)
    assert joined[0].seat == 0  # type: ignore[attr-defined]


def test_the_host_fills_every_free_seat_with_a_bot_and_the_game_starts() -> None:
    g = online_game("skull", 4, seed=2, humans=1)
    assert g.state.status == "playing" and g.state.bots == frozenset({1, 2, 3})
    assert [p.name for p in g.state.seated][1:] == ["Bot 2", "Bot 3", "Bot 4"]
    with pytest.raises(Conflict) as refused:
        g.table.fill_with_bots(g.state, g.seeds)
    assert refused.value.code == "not_waiting"


def test_a_waiting_table_expires_and_refuses_to_seat_anyone_after() -> None:
    g = online_game("six-nimmt", 4, seed=4)
    assert g.state.status == "playing"
    with pytest.raises(Conflict):
        g.table.expire(g.state)
    fresh = _waiting("six-nimmt", 4)
    fresh_events = fresh.table.expire(fresh.state)
    assert fresh_events == [TableExpired()]
    fresh.apply(fresh_events)
    assert fresh.state.status == "expired"
    with pytest.raises(Conflict) as refused:
        fresh.table.join(fresh.state, "Late", "", fresh.seeds)
    assert refused.value.code == "table_expired"


def _waiting(game: str, players: int) -> RecordedGame:
    from domain.games import table_for
    from tests.support.play import seeds_from

    table = table_for(game)
    seeds = seeds_from(9)
    created = table.create("w", players, {}, seeds.chain_commitment(0), False, TIMERS)
    state = table.fold(None, created)
    assert state is not None
    return RecordedGame(table=table, seeds=seeds, state=state)


@settings(max_examples=12)
@given(case=st.sampled_from(GAMES), seed=st.integers(0, 10_000), humans=st.integers(0, 4))
def test_the_verifier_accepts_games_with_timeouts_bots_leaves_and_reclaimed_seats(
    case: tuple[str, int, dict[str, Any]], seed: int, humans: int
) -> None:
    game, players, options = case
    g = online_game(game, players, options, seed=seed, humans=min(humans, players))
    play_online(g, random.Random(seed), timeout_share=0.3, leave_share=0.02, reclaim_share=0.2)
    _verified(g)


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.stem)
def test_a_stream_recorded_before_the_online_lifecycle_still_folds_and_verifies(path: Path) -> None:
    doc = json.loads(path.read_text())
    report = verify_export(doc)
    assert report.ok, report.render()
    entries = parse_entries(doc)
    folded = advance("golden", None, entries)
    assert folded.state.status == "finished" and folded.state.timers is None
    assert msgspec.json.decode(entries[0].data)["command"]["body"].get("table") is None
