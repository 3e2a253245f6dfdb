"""Skull as the registry knows it: everything the service needs about the game besides its rules."""

from __future__ import annotations

from domain.skull.options import MAX_PLAYERS, MAX_PLAYERS_TWO_SETS, MIN_PLAYERS
from domain.skull.rules import RULES
from domain.spec import GameSpec, ReplayCut

SPEC = GameSpec(
    name="skull",
    title="Skull",
    blurb="✿ ☠",
    package="skull",
    rules=RULES,
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    default_players=4,
    max_players_with_options=MAX_PLAYERS_TWO_SETS,
    widening_option="two_sets",
    seat_options=frozenset({"first_player"}),
    replay_cut=ReplayCut(
        round_opens=frozenset({"round_started"}),
        round_ends=frozenset({"round_ended"}),
        step_opens={
            "round_started": "placing",
            "disc_placed": "placing",
            "bid_made": "auction",
            "challenge_started": "challenge",
        },
    ),
    draws={
        "first-player": "round 1: uniform(players), the seat that starts, unless the table names one",
        "discard": "the round: a shuffle of the challenger's discs for the blind draw of the one he loses "
        "(hand and mat together, flowers first, then skulls)",
        "timeout-discard": "the round: uniform(discs owned), the disc lost by a challenger whose time ran "
        "out on his own skull (his discs, flowers first, then skulls)",
    },
    option_notes={
        "two_sets": "Combine two boxes: 3 to 12 players instead of 3 to 6 (each still has 4 discs).",
        "reveal_all_own_first": "The challenger turns his whole own stack, even beyond his bid (PL/TR).",
        "first_after_elimination": "Who starts after the challenger is eliminated: the skull's owner "
        "or the eliminated player's choice (FR/TR), or his left neighbour (PL).",
        "last_chance": "French variant: a player down to one disc gets a 'Last chance' flower for a round.",
        "first_player": "The seat that starts round 1; empty: drawn fairly.",
    },
)
