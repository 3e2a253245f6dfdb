"""Skull King's bot, the game's ``spec.bot_module``: the whole ``bots.Bot`` protocol.

- ``choose(view, rng)``, ``reason(view, command)``: the ``normal`` level's heuristic
  (``heuristic.py``): bid the hand's expected tricks, then play to make exactly that.
- ``sample(view, rng)``, ``light_view(state, seat)``: the ``strong`` level's determinisation
  (``determinise.py``).
- ``value(rules, before, after, seat)``: how a rolled-out round went for a seat (``value.py``).
"""

from bots.skull_king.determinise import light_view, sample
from bots.skull_king.heuristic import choose, reason
from bots.skull_king.value import value

__all__ = ["choose", "light_view", "reason", "sample", "value"]
