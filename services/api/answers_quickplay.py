"""The answers of quick play (``services.people.quickplay``) as msgspec Structs: the types of
``/openapi.json``'s answers (see ``services.api.answers``)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from services.api.answers import GameName, Seat

TicketId = Annotated[str, Meta(pattern="^[0-9a-f]{16}$")]


class Ticket(msgspec.Struct):
    """A quick play ticket as its holder reads it: 'position' while it is queued (when known),
    'game_id' and 'seat' once seated, 'token' (the seat's) in the first answer that shows it seated
    only."""

    ticket: TicketId
    state: Literal["queued", "matched", "seated", "timed_out"]
    game: GameName
    players: Annotated[int, Meta(ge=2)]
    bots_after_wait: bool
    waited_ms: Annotated[int, Meta(ge=0)]
    wait_bound_seconds: Annotated[int, Meta(ge=0)]
    max_wait_seconds: Annotated[int, Meta(ge=0)]
    position: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    game_id: str | UnsetType = UNSET
    seat: Seat | UnsetType = UNSET
    token: Annotated[str, Meta(description="The seat's token (first seated answer only)")] | UnsetType = UNSET


class OpenedTicket(Ticket, kw_only=True):
    """``POST /quickplay``: the ticket and its token (also set as the 'ts_quickplay' cookie)."""

    ticket_token: str


class CancelledTicket(msgspec.Struct):
    ticket: TicketId
    state: Literal["cancelled"]
