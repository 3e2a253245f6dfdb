"""Skull King (shared/RULES.md): ten rounds of hidden bids and tricks with special cards."""

from domain.skull_king.rules import RULES, SkullKingRules

__all__ = ["RULES", "SkullKingRules"]
