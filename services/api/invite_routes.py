"""``GET /games/{id}/invite``: the link that seats a friend at a table (a private table's carries its
invite code; see ``services.table.invitations``). The invite gate lets only the table's players, its host,
the operator and holders of the link through to a private table's route; anyone may ask a public
table's link."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from services.api.answers import InviteAnswer
from services.api.contract import Answer, Operation, errors
from services.api.http import JSONResponse, game_id_of
from services.api.invite_gate import invitations_of
from services.errors import game_not_found
from services.table.invitations import PUBLIC


def invite_link(game_id: str, code: str) -> str:
    """The path of a table's invite link (the page of the table, with its code when private)."""
    return f"/tables/{game_id}?invite={code}" if code != PUBLIC else f"/tables/{game_id}"


async def invite_of(request: Request, game_id: str) -> dict[str, Any]:
    """``private``, ``invite`` (the code; ``None`` for a public table) and ``link``."""
    invitations = invitations_of(request.scope)
    code = await invitations.code(game_id) if invitations is not None else None
    if code is None:
        raise game_not_found(game_id)
    return {"private": code != PUBLIC, "invite": code or None, "link": invite_link(game_id, code)}


async def get_invite(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    return JSONResponse({"game_id": game_id, **await invite_of(request, game_id)})


operations = [
    Operation(
        "GET",
        "/games/{game_id}/invite",
        get_invite,
        answers={200: Answer("private, invite, link", InviteAnswer)},
        summary="The link that seats a friend (a private table's carries its invite code)",
        description=(
            "A private table's only for its code's holders and its own tokens' (a seat's or the host's, as "
            "the bearer or the browser's cookie); for anyone else it is an unknown game."
        ),
        errors=errors(404),
    ),
]
