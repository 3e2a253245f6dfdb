"""Sample a whole game state consistent with one seat's view: the ``strong`` level's determinisation.

Each game's bot module provides its own (``bots.Bot``): ``sample(view, rng)`` builds the game's
full rules state (``domain/<package>/state.py``) from the view alone: everything the view shows is
copied as it is, and only what it hides (the other seats' cards or discs, the undealt cards,
face-down selections, bids not yet revealed) is drawn with ``rng`` among the possibilities the view
leaves open. The same view and the same ``rng`` therefore give the same sample whatever the real
hidden state is. ``light_view(state, seat)`` is the part of a seat's view that the game's ``normal``
policy reads, built cheaply from a (sampled) state for the rollouts.

Here, for callers that hold a game's name: both, found through the registry (``bots.bot_for``).
"""

from __future__ import annotations

import random
from typing import Any

from bots import bot_for

View = dict[str, Any]


def sample(game: str, view: View, rng: random.Random) -> Any:
    """A whole state of ``game`` that shows ``view`` to its seat, its hidden parts drawn with ``rng``."""
    return bot_for(game).sample(view, rng)


def light_view(game: str, state: Any, seat: int) -> View:
    """What ``game``'s ``normal`` policy reads of ``seat``'s view of ``state``."""
    return bot_for(game).light_view(state, seat)
