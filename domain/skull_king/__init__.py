"""Skull King (docs/rules.md): ten rounds of hidden bids and tricks with special cards."""

from domain.skull_king.game import SPEC
from domain.skull_king.rules import RULES, SkullKingRules

__all__ = ["RULES", "SPEC", "SkullKingRules"]
