"""6 nimmt! table options (docs/rules.md "6 nimmt!"): the seed's defaults and the readings it leaves open."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from domain.kernel import Options

MIN_PLAYERS = 2
MAX_PLAYERS = 10
MAX_END_SCORE = 1000  # keeps a table finite in practice: every round costs someone at least 1 bullhead
MAX_ROUNDS = 100

EndCompare = Literal["gt", "ge"]


class SixNimmtOptions(Options, frozen=True, kw_only=True):
    """Fixed for the whole game and recorded in ``table_created``.

    - ``end_score``: the game ends after the round in which some total passes it (seed: 66).
    - ``end_compare``: ``"gt"`` (the seed: "more than 66") or ``"ge"`` (the publisher: "66 or more").
    - ``rounds``: play exactly this many rounds instead; ``end_score`` is then ignored (the seed
      allows "a fixed number of rounds" as an alternative end).
    - ``tactical``: the seed's advanced mode: only cards 1..10n+4, drafted face up, hands public.
    """

    end_score: Annotated[int, Meta(ge=1, le=MAX_END_SCORE)] = 66
    end_compare: EndCompare = "gt"
    rounds: Annotated[int, Meta(ge=1, le=MAX_ROUNDS)] | None = None
    tactical: bool = False
