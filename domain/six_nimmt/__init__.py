"""6 nimmt! (shared/RULES.md): the rules as a pure Decider, standard and tactical modes."""

from domain.six_nimmt.rules import RULES, SixNimmtRules

__all__ = ["RULES", "SixNimmtRules"]
