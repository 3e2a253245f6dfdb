"""No seat can predict a bot's hidden choices (issue 24, defect 3).

Skull bots at tables with one other seat, played through the real bot code (``workers.lifecycle.
bot_move``): an opponent re-runs that code for each of the bots' disc placements with everything
public about it (the game id, the version, the seat, and, more than any seat has, the bot's own
exact view), seeding the bot's chance every public way it can think of. With the old derivation,
``random.Random("<game>:<version>:<seat>")``, it names every hidden disc; with the chance keyed by
the game's secret master seed it does no better than always naming the likelier disc.
Replayable: each game's seed is its index in ``range(GAMES)``."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest

from bots import BotRandom, choose
from domain.fairness import SecretSeeds
from projections.views import seat_view
from services.history.records import CommandRecord
from tests.support.online import online_game
from workers.lifecycle import bot_move, bot_rng

GAMES = 60
MAX_STEPS = 3000

Rng = Callable[[str, int, int], random.Random]


def old_public_rng(game_id: str, version: int, seat: int) -> random.Random:
    """How main seeded a bot's chance (``workers/lifecycle.py`` before issue 24)."""
    return random.Random(f"{game_id}:{version}:{seat}")


def public_guesses(commitment: str) -> list[Rng]:
    """Every way an opponent might seed the bot's chance from public inputs: the old formula, and
    the new key derivation fed the game's public commitment in place of its secret seeds."""
    public = SecretSeeds(bytes.fromhex(commitment), bytes.fromhex(commitment))
    return [old_public_rng, lambda game_id, version, seat: bot_rng(public, game_id, version, seat)]


def disc_choice(view: dict[str, Any]) -> bool:
    """Whether the bot chooses between its skull and a flower here (a hidden choice)."""
    discs = {c["disc"] for c in view["legal"] if c["type"] == "place_disc"}
    return {"skull", "flower"} <= discs and "last_chance" not in discs


def predicted_disc(view: dict[str, Any], rng: random.Random) -> str:
    command = choose("skull", view, rng)
    return str(command["disc"]) if command["type"] == "place_disc" else "flower"


def play(seed: int, old: bool) -> list[tuple[str, list[str]]]:
    """One Skull game of seat 0 (random legal moves) against two bots; for each hidden disc choice
    of a bot, the disc it placed and each public guess's prediction."""
    rng = random.Random(seed)
    g = online_game("skull", 3, seed=seed, humans=1)
    g.seeds = SecretSeeds(rng.randbytes(32), rng.randbytes(32))  # the server's secret, unknown to seats
    game_id = g.state.game_id
    guesses = public_guesses(g.state.commitments[0])
    choices: list[tuple[str, list[str]]] = []
    for _ in range(MAX_STEPS):
        if g.state.status == "finished":
            break
        version = len(g.entries)
        seat = sorted(g.table.to_act(g.state))[0]
        if seat not in g.state.bots:
            g.act(seat, rng.choice(g.table.rules.legal_commands(g.state.game_state, seat)))
            continue
        view = seat_view(g.state, version, seat)
        if old:
            move = choose("skull", view, old_public_rng(game_id, version, seat))
        else:
            move = bot_move(SimpleNamespace(state=g.state, version=version, game_id=game_id), seat, g.seeds)  # type: ignore[arg-type]
        if disc_choice(view) and move["type"] == "place_disc":
            choices.append(
                (move["disc"], [predicted_disc(view, guess(game_id, version, seat)) for guess in guesses])
            )
        command = msgspec.convert(move, g.table.command_type)
        events = g.table.bot_decide(g.state, command, seat, g.seeds)
        g.record(CommandRecord(id=f"bot-{version}-{seat}", kind="bot", seat=seat, body=move), events)
    assert g.state.status == "finished"
    return choices


def tally(old: bool) -> tuple[int, int, list[int]]:
    """(hidden disc choices, skulls among them, right predictions per public guess)."""
    choices = [c for seed in range(GAMES) for c in play(seed, old)]
    skulls = sum(1 for disc, _ in choices if disc == "skull")
    right = [sum(1 for disc, guesses in choices if guesses[i] == disc) for i in range(2)]
    return len(choices), skulls, right


def test_with_the_old_public_seed_an_opponent_names_every_hidden_disc_of_a_bot() -> None:
    n, skulls, right = tally(old=True)
    print(f"old derivation: {right[0]} of {n} hidden discs predicted ({skulls} skulls)")
    assert n > 100 and skulls > 10
    assert right[0] == n  # the re-run is the bot


@pytest.mark.thorough
def test_with_the_secret_keyed_chance_no_public_guess_beats_naming_the_likelier_disc() -> None:
    n, skulls, right = tally(old=False)
    majority = max(skulls, n - skulls)
    slack = 3 * math.sqrt(n * 0.25)  # three standard deviations of a fair count
    for i, hits in enumerate(right):
        print(f"guess {i}: {hits} of {n} hidden discs right; always the likelier disc: {majority}")
        assert hits <= majority + slack
    assert n > 100 and 0 < skulls < n


def test_a_bots_chance_restored_from_a_saved_state_repeats_the_same_draws() -> None:
    rng = BotRandom(b"k" * 32)
    rng.random()
    saved = rng.getstate()
    ahead = [rng.random(), rng.getrandbits(70), rng.randrange(1000)]
    rng.setstate(saved)
    assert [rng.random(), rng.getrandbits(70), rng.randrange(1000)] == ahead
    with pytest.raises(TypeError):
        rng.setstate(random.Random(1).getstate())
