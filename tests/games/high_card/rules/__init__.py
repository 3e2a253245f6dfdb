"""High Card's rules as a pure Decider, in the shape every game shares (``docs/adding-a-game.md``)."""

from tests.games.high_card.rules.options import MAX_PLAYERS, MIN_PLAYERS
from tests.games.high_card.rules.rules import RULES

__all__ = ["MAX_PLAYERS", "MIN_PLAYERS", "RULES"]
