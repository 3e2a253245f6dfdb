"""6 nimmt! commands, tagged with their wire ``type`` from docs/api.md "Commands"."""

from __future__ import annotations

from domain.kernel import Command


class SelectCard(Command, tag="select_card", frozen=True):
    """Put one card from hand face down for this turn; final once sent."""

    card: int


class ChooseRow(Command, tag="choose_row", frozen=True):
    """Take row ``row`` (0-3) because one's card is lower than every row's end (rule 4)."""

    row: int


class DraftCard(Command, tag="draft_card", frozen=True):
    """Tactical mode: take one of the face-up cards into one's hand."""

    card: int


SixNimmtCommand = SelectCard | ChooseRow | DraftCard
