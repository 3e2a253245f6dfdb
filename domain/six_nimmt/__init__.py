"""6 nimmt! (docs/rules.md): the rules as a pure Decider, standard and tactical modes."""

from domain.six_nimmt.game import SPEC
from domain.six_nimmt.rules import RULES, SixNimmtRules

__all__ = ["RULES", "SPEC", "SixNimmtRules"]
