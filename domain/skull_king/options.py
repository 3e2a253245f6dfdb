"""Skull King table options (docs/rules.md): every reading the seed leaves open, with its default."""

from __future__ import annotations

from typing import Literal

from domain.kernel import Options

MIN_PLAYERS = 2
MAX_PLAYERS = 6
ROUNDS = 10

Scoring = Literal["seed", "classic"]


class SkullKingOptions(Options, frozen=True, kw_only=True):
    """Fixed for the whole game and recorded in ``table_created``.

    - ``scoring``: ``"seed"`` (the FR seed: an exact bid b >= 1 scores 20 per trick plus 10 x round)
      or ``"classic"`` (the publisher's older edition: 20 per trick only).
    - ``character_lead_no_suit``: a Pirate, Mermaid or Skull King led means the trick has no suit
      (later edition); by default the first numbered card sets the suit whatever came before.
    - ``scary_mary_escape_counts_as_pirate``: Scary Mary played as an Escape still counts for the
      Skull King's +30 per Pirate.
    """

    scoring: Scoring = "seed"
    character_lead_no_suit: bool = False
    scary_mary_escape_counts_as_pirate: bool = False
