"""6 nimmt!'s bot, the game's ``spec.bot_module``: the whole ``bots.Bot`` protocol.

- ``choose(view, rng)``, ``reason(view, command)``: the ``normal`` level's heuristic
  (``heuristic.py``): the card least likely to take a row this turn, the cheapest row.
- ``sample(view, rng)``, ``light_view(state, seat)``: the ``strong`` level's determinisation
  (``determinise.py``).
- ``value(rules, before, after, seat)``: how a rolled-out round went for a seat (``value.py``).
"""

from bots.six_nimmt.determinise import light_view, sample
from bots.six_nimmt.heuristic import choose, reason
from bots.six_nimmt.value import value

__all__ = ["choose", "light_view", "reason", "sample", "value"]
