"""An operator closing a table (``Table.close``, ``table_closed``) and banning an account
(``account_banned``/``account_unbanned``): pure decisions and folds, and the offline verifier
accepting a closed table's stream as a complete one - including a forged close it must refuse."""

from __future__ import annotations

import random

import msgspec
import pytest

from domain.accounts import AccountBanned, AccountRegistered, AccountUnbanned, TokenIssued, fold
from domain.games import specs, table_for
from domain.kernel import Conflict, Rejected
from domain.table import SeedRevealed, TableClosed
from services.history.export import build_export
from services.history.records import CommandRecord
from services.history.verify import verify_export
from tests.support.online import online_game
from tests.support.play import seeds_from
from tests.support.recorded import RecordedGame

GAMES = [(game.name, game.default_players) for game in specs()]


def close(g: RecordedGame, reason: str = "stuck", operator: str = "admin") -> list[object]:
    events = g.table.close(g.state, reason, operator, g.seeds)
    body = {"reason": reason.strip(), "operator": operator}
    return list(g.record(CommandRecord(id=f"close-{len(g.entries)}", kind="close", body=body), events))


def play(g: RecordedGame, moves: int, rng: random.Random) -> int:
    """Up to ``moves`` random legal moves; how many were played before the game ended."""
    for played in range(moves):
        if g.state.status != "playing":
            return played
        seat = rng.choice(sorted(g.table.to_act(g.state)))
        g.act(seat, rng.choice(g.legal(seat)))
    return moves


def game_length(game: str, players: int, seed: int) -> int:
    """How many moves the seeded random game of ``play`` lasts to its end."""
    return play(online_game(game, players, seed=seed), 100_000, random.Random(seed))


@pytest.mark.parametrize(("game", "players"), GAMES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_table_closed_mid_game_reveals_its_seeds_and_verifies(game: str, players: int, seed: int) -> None:
    length = game_length(game, players, seed)
    g = online_game(game, players, seed=seed)
    play(g, random.Random(seed * 7919).randrange(1, min(length, 60)), random.Random(seed))
    assert g.state.status == "playing"
    current = g.table.rules.current_round(g.state.game_state)

    events = close(g, "  abusive chat ", "0123456789abcdef")

    assert events[0] == TableClosed(reason="abusive chat", operator="0123456789abcdef")
    revealed = {e.round for e in events if isinstance(e, SeedRevealed)} | set(g.state.revealed)
    assert revealed == set(range(1, current + 1))
    assert g.state.status == "closed" and g.table.to_act(g.state) == []
    document = build_export(g.entries)
    assert document["closed"] == {"reason": "abusive chat", "operator": "0123456789abcdef"}
    report = verify_export(document)
    assert report.ok, report.render()


def test_a_waiting_table_closes_with_the_event_alone() -> None:
    g = waiting_table()

    events = close(g)

    assert events == [TableClosed(reason="stuck", operator="admin")]
    assert g.state.status == "closed"
    assert verify_export(build_export(g.entries)).ok


def waiting_table() -> RecordedGame:
    """A Skull table with one seat of three taken, recorded as the server records it."""
    table = table_for("skull")
    seeds = seeds_from(9)
    created = table.create("test-waiting", 3, {}, seeds.chain_commitment(0), False)
    state = table.fold(None, created)
    assert state is not None
    g = RecordedGame(table=table, seeds=seeds, state=state, salted=True)
    g.record(
        CommandRecord(id="create", kind="create", body={"game": "skull", "players": 3, "options": {}}),
        created,
    )
    joined = table.join(g.state, "P0", "cs0", seeds)
    g.record(CommandRecord(id="join-0", kind="join", body={"name": "P0", "client_seed": "cs0"}), joined)
    return g


def test_a_closed_table_refuses_everything_after_and_a_close_needs_a_reason() -> None:
    g = online_game("skull", 3, seed=5)
    with pytest.raises(Rejected) as blank:
        g.table.close(g.state, "   ", "admin", g.seeds)
    close(g)
    seat = g.table.rules.to_act(g.state.game_state)[0]
    legal = g.table.rules.legal_commands(g.state.game_state, seat)[0]

    for attempt in (
        lambda: g.table.close(g.state, "again", "admin", g.seeds),
        lambda: g.table.decide(g.state, legal, seat, g.seeds),
        lambda: g.table.reclaim(g.state, seat),
    ):
        with pytest.raises(Conflict) as refused:
            attempt()
        assert refused.value.code == "table_closed"
    assert blank.value.code == "invalid_reason"


def test_a_forged_close_by_another_operator_than_recorded_fails_the_verifier() -> None:
    g = online_game("six-nimmt", 4, seed=6)
    play(g, 10, random.Random(6))
    close(g, "stuck", "admin")
    document = build_export(g.entries)

    document["closed"] = {"reason": "stuck", "operator": "someone else"}

    assert not verify_export(document).ok


def test_a_ban_and_an_unban_fold_into_the_account_state() -> None:
    events = [
        AccountRegistered(
            account_id="0123456789abcdef", display_name="Ada", normalised="ada", skeleton="ada"
        ),
        TokenIssued(token_hash="ab" * 32, via="register"),
        AccountBanned(reason="insults", operator="admin"),
    ]
    banned = fold(events)
    unbanned = fold([*events, AccountUnbanned(reason="appeal", operator="fedcba9876543210")])

    assert banned is not None and banned.banned and banned.ban_reason == "insults"
    assert banned.token_hashes == frozenset({"ab" * 32})  # its tokens are refused, not forgotten
    assert unbanned is not None and not unbanned.banned and unbanned.ban_reason is None


def test_old_account_events_encode_as_before() -> None:
    """An account stream written before bans re-reads to the same state (the new fields default)."""
    registered = AccountRegistered(
        account_id="0123456789abcdef", display_name="Ada", normalised="ada", skeleton="ada"
    )
    data = msgspec.json.encode(registered)

    state = fold([msgspec.json.decode(data, type=AccountRegistered)])

    assert data.startswith(b'{"type":"account_registered"') and state is not None and state.banned is False
