"""The whole truth of a 6 nimmt! game, hidden parts included: frozen Structs and tuples only."""

from __future__ import annotations

from typing import Literal

import msgspec

from domain.six_nimmt.options import SixNimmtOptions

Phase = Literal["waiting", "drafting", "selecting", "resolving", "choosing_row", "scoring", "finished"]


class SixNimmtState(msgspec.Struct, frozen=True, kw_only=True):
    """Everything about one game.

    ``round`` is 0 before the first deal; ``turn`` counts the reveals of the round so far. During a
    round every card of its deck is in exactly one place: a hand, a row, a penalty pile
    (``piles``), ``selected`` (face down), ``pending`` (revealed, not yet placed), the tactical
    ``pool`` or ``unused``. ``revealed`` keeps the last turn's cards by seat for everyone to see;
    ``awaiting`` is the seat whose row choice (rule 4) holds up resolution. ``totals`` include the
    bullheads taken in the round in play; ``history`` has one line of penalties per scored round.

    The phases ``resolving`` and ``scoring`` only exist between the events of one batch.
    """

    options: SixNimmtOptions
    players: int
    phase: Phase = "waiting"
    round: int = 0
    turn: int = 0
    hands: tuple[tuple[int, ...], ...] = ()
    rows: tuple[tuple[int, ...], ...] = ()
    unused: tuple[int, ...] = ()
    pool: tuple[int, ...] = ()
    first_drafter: int | None = None
    drafter: int | None = None
    selected: tuple[int | None, ...] = ()
    revealed: tuple[int, ...] = ()
    pending: tuple[int, ...] = ()
    awaiting: int | None = None
    piles: tuple[tuple[int, ...], ...] = ()
    history: tuple[tuple[int, ...], ...] = ()
    totals: tuple[int, ...] = ()

    def owner_of_revealed(self, card: int) -> int:
        """The seat that played a revealed card (cards are unique, so the card names its seat)."""
        return self.revealed.index(card)

    def rounds_completed(self) -> int:
        return len(self.history)


def fresh_state(options: SixNimmtOptions, players: int) -> SixNimmtState:
    empty: tuple[tuple[int, ...], ...] = ((),) * players
    return SixNimmtState(
        options=options,
        players=players,
        hands=empty,
        piles=empty,
        selected=(None,) * players,
        totals=(0,) * players,
    )
