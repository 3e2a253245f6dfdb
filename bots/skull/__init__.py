"""Skull's bot, the game's ``spec.bot_module``: the whole ``bots.Bot`` protocol.

- ``choose(view, rng)``: the ``normal`` level's heuristic (``heuristic.py``): careful challenges,
  the occasional bluff. It gives no reasons.
- ``sample(view, rng)``, ``light_view(state, seat)``: the ``strong`` level's determinisation
  (``determinise.py``).
- ``value(rules, before, after, seat)``: how a rolled-out round went for a seat (``value.py``).
"""

from bots.skull.determinise import light_view, sample
from bots.skull.heuristic import choose
from bots.skull.value import value

__all__ = ["choose", "light_view", "sample", "value"]
