"""What every sentence of the log is built with: ``Say``, the language, the game, the seat names and
who acted of one ``projections.narration.narrate`` call, with the helpers every game's sentences use.

A game's narration module (``projections/<package>/narration.py``) receives a ``Say`` and calls it
with the key of a ``log.*`` entry of the glossary, without the ``log.`` prefix:
``say("skull.bid_made", count=3)``. Seats and rows are numbered from 1 for people, as on the paper
score pads (seat 0 is "Seat 1" when no name is known).

Sentences about something a seat did by its own command ("Ada bids 3") are built with ``actor``
around a predicate ("bids 3"), so that ``by="bot"`` and ``by="timeout"`` can mark who really acted:
"Ada (bot) bids 3", "Ada ran out of time: bids 3". Polish and Turkish sentences avoid inflecting
names: a name is a subject or stands after a colon.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from projections.words import DEFAULT_LANGUAGE, GLOSSARY, word

LOG = "log."  # the narration's own keys in the glossary; game titles ("game.*") are the page's too


class Say:
    """The language, game, names and manner of one ``narrate`` call, with the helpers every event uses.

    ``lang`` is one of the glossary's languages (anything else reads as English), ``game`` the public
    name of the table's game, ``names`` the seat names in seat order, ``by`` how the command came
    (``None`` or ``"player"``, ``"bot"``, ``"timeout"``).
    """

    def __init__(self, lang: str, game: str, names: Sequence[str] = (), by: str | None = None) -> None:
        self.lang = lang if lang in GLOSSARY else DEFAULT_LANGUAGE
        self.game = game
        self.names = names
        self.by = by

    def __call__(self, key: str, **values: Any) -> str:
        return word(self.lang, LOG + key, **values)

    def knows(self, key: str) -> bool:
        return LOG + key in GLOSSARY[self.lang]

    def title(self, game: Any) -> str:
        key = f"game.{game}"
        return word(self.lang, key) if key in GLOSSARY[self.lang] else str(game)

    def name(self, seat: Any) -> str:
        if isinstance(seat, int) and 0 <= seat < len(self.names):
            return self.names[seat]
        number = seat + 1 if isinstance(seat, int) else seat
        return self("seat", number=number)

    def count(self, noun: str, n: int) -> str:
        """``n`` and the noun in the form the language's plural rules pick: "1 flower", "5 kwiatów"."""
        return self(f"n.{noun}", n=n)

    def duration(self, seconds: int) -> str:
        """A length of time in its largest whole unit, counted: "1 day", "90 seconds", "2 godziny"."""
        for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
            if seconds >= size and seconds % size == 0:
                return self.count(unit, seconds // size)
        return self.count("second", seconds)

    def listing(self, items: Sequence[str]) -> str:
        if len(items) <= 1:
            return "".join(items)
        return f"{', '.join(items[:-1])} {self('and')} {items[-1]}"

    def by_seat(self, values: Sequence[Any], shown: Callable[[Any], str] = str) -> str:
        """One value per seat in seat order: "Ada 2, Bart 0"."""
        return ", ".join(f"{self.name(seat)} {shown(value)}" for seat, value in enumerate(values))

    def actor(self, seat: Any, predicate: str, acting: bool = True) -> str:
        """``seat`` did ``predicate``; when it is the seat's own command, ``by`` marks a bot or a timeout."""
        manner = self.by if acting and self.by in ("bot", "timeout") else "player"
        return self(f"actor.{manner}", name=self.name(seat), predicate=predicate)


Sentence = Callable[[Say, Mapping[str, Any]], str]
"""How one event type reads: the ``Say`` of the call and the event as the viewer received it."""
