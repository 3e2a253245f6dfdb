"""Skull: bluff with flowers and skulls (shared/RULES.md). ``RULES`` is its Decider."""

from domain.skull.rules import RULES

__all__ = ["RULES"]
