"""6 nimmt! as the registry knows it: everything the service needs about the game besides its rules."""

from __future__ import annotations

from domain.six_nimmt.options import MAX_PLAYERS, MIN_PLAYERS
from domain.six_nimmt.rules import RULES
from domain.spec import GameSpec, ReplayCut

SPEC = GameSpec(
    name="six-nimmt",
    title="6 nimmt!",
    blurb="104 · ▼",
    package="six_nimmt",
    rules=RULES,
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    default_players=4,
    lower_score_wins=True,  # bullheads are penalties
    replay_cut=ReplayCut(
        round_opens=frozenset({"cards_dealt", "draft_opened"}),
        round_ends=frozenset({"round_scored"}),
        step_opens={"draft_opened": "draft", "cards_dealt": "turn", "card_selected": "turn"},
        step_closes=frozenset({"draft_completed", "cards_revealed"}),
    ),
    draws={
        "deal": "each round: a shuffle of 1..104 ascending; seat i gets cards [10i, 10i + 10), the rows "
        "start with [10n + k], the rest is unused",
        "first-drafter": "tactical, round 1: uniform(players), the first to draft; "
        "then the next seat each round",
    },
    option_notes={
        "end_score": "The game ends after the round in which someone's bullheads pass this total.",
        "end_compare": "'gt': more than the end score ends the game (seed); 'ge': reaching it does.",
        "rounds": "Play exactly this many rounds instead (the end score is then ignored); empty: off.",
        "tactical": "Advanced mode: cards 1 to 10n+4, drafted face up one at a time; hands are public.",
    },
)
