"""Skull: bluff with flowers and skulls (docs/rules.md). ``RULES`` is its Decider."""

from domain.skull.game import SPEC
from domain.skull.rules import RULES

__all__ = ["RULES", "SPEC"]
