"""Skull King as the registry knows it: everything the service needs about the game besides its rules."""

from __future__ import annotations

from domain.skull_king.options import MAX_PLAYERS, MIN_PLAYERS
from domain.skull_king.rules import RULES
from domain.spec import GameSpec, ReplayCut

SPEC = GameSpec(
    name="skull-king",
    title="Skull King",
    blurb="☀ ♥ ⚓ ☠ ♛",
    package="skull_king",
    rules=RULES,
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    default_players=3,
    replay_cut=ReplayCut(
        round_opens=frozenset({"cards_dealt"}),
        round_ends=frozenset({"round_scored"}),
        step_opens={"cards_dealt": "bidding", "card_played": "trick"},
        step_closes=frozenset({"trick_won"}),
    ),
    draws={
        "first-dealer": "round 1: uniform(players), the dealer of round 1; the dealer moves left each round",
        "deal": "round r: a shuffle of the deck (yellow, red, blue, black 1-13, escapes 1-5, pirates 1-5, "
        "mermaids 1-2, scary-mary, skull-king); card i goes to seat (dealer + 1 + i) % n for the first "
        "r * n cards, the rest is unused",
    },
    option_notes={
        "scoring": "'seed': an exact bid scores 20 per trick plus 10 x round; 'classic': 20 per trick.",
        "character_lead_no_suit": "A Pirate, Mermaid or Skull King led means the trick has no suit.",
        "scary_mary_escape_counts_as_pirate": "Scary Mary played as an Escape still counts for the "
        "Skull King's +30.",
    },
)
