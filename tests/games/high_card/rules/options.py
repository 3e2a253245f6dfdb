"""High Card's table options."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from domain.kernel import Options

MIN_PLAYERS = 2
MAX_PLAYERS = 5


class HighCardOptions(Options, frozen=True, kw_only=True):
    """``rounds``: how many rounds are played."""

    rounds: Annotated[int, Meta(ge=1, le=5)] = 2
