"""Disputes (``services.disputes.cases``, docs/api.md "Disputes"): a seated player of the game (their
seat token, bearer or the browser's seat cookie) or an operator (``services.api.operator_routes``)
opens one, adds evidence, reads it and downloads its bundle; only an operator resolves. Anyone
else is refused with 403 ``not_a_player`` before anything of the dispute is read."""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType
from starlette.requests import Request
from starlette.responses import Response

from domain.disputes import Party
from services.api.answers_disputes import (
    BundleVerdict,
    DisputeBundle,
    DisputeRecord,
    GameDisputes,
    OpenDisputes,
)
from services.api.bodies import AddEvidence, OpenDispute, ResolveDispute
from services.api.context import app_context
from services.api.contract import Answer, Operation, errors
from services.api.http import JSONResponse, caller_of, client_address, game_id_of, int_query, read_body
from services.api.operator_routes import OPERATOR_RATE, acting_operator, operator_of
from services.disputes.cases import Disputes
from services.errors import ForbiddenError
from services.fairness.transparency.log import proofs_for_game
from services.history.records import Entry
from services.operating.operator import invalid_cursor
from services.operating.operator import record as record_action

MAX_PAGE = 100
OPEN_CURSOR = re.compile(r"(\d{1,20})/([A-Za-z0-9_-]{1,64})/([0-9a-f]{16})")


def disputes_of(request: Request) -> Disputes:
    context = app_context(request)

    async def extra(game_id: str, entries: list[Entry]) -> dict[str, Any]:
        """The bundle's keys (``services.fairness.receipts``) and log proofs
        (``services.fairness.transparency``)."""
        keys = (await context.receipts.keys()).public_document()
        return {"keys": keys, "log": await proofs_for_game(context.store, game_id)}

    return Disputes(context.store, context.queries, extra, context.verdicts)


async def party_of(request: Request, game_id: str) -> Party:
    """An operator, else the game's seated player asking, else 403 ``not_a_player``."""
    try:
        who = await operator_of(request)
        return Party(role="operator", operator=who.id, name=who.name)
    except ForbiddenError:
        pass
    caller = await caller_of(request, game_id)
    if caller.role == "operator":  # the admin token sent on a game route
        return Party(role="operator", operator="admin", name="admin")
    if caller.seat is None:
        raise ForbiddenError(
            "not_a_player", "Only a seated player of this game or an operator may see or open its disputes."
        )
    return Party(role="seat", seat=caller.seat)


async def _count_write(request: Request, by: Party) -> None:
    """A player's dispute writes count against their address's ``dispute_rate`` (429 past it)."""
    if by.role == "seat":
        await app_context(request).rate_limits.hit("dispute", client_address(request))


def _dispute_id(request: Request) -> str:
    dispute_id: str = request.path_params["dispute_id"]
    return dispute_id


async def open_dispute(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    by = await party_of(request, game_id)
    await _count_write(request, by)
    body = await read_body(request, OpenDispute)
    record = await disputes_of(request).open(game_id, by, body.round, body.text, body.seat)
    return JSONResponse(record, status_code=201)


async def list_disputes(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    await party_of(request, game_id)
    return JSONResponse({"disputes": await disputes_of(request).of_game(game_id)})


async def read_dispute(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    await party_of(request, game_id)
    return JSONResponse(await disputes_of(request).read(game_id, _dispute_id(request)))


async def add_evidence(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    by = await party_of(request, game_id)
    await _count_write(request, by)
    body = await read_body(request, AddEvidence)
    record = await disputes_of(request).add_evidence(
        game_id, _dispute_id(request), by, body.kind, body.content
    )
    return JSONResponse(record)


async def resolve(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    who = await acting_operator(request)
    body = await read_body(request, ResolveDispute)
    by = Party(role="operator", operator=who.id, name=who.name)
    dispute_id = _dispute_id(request)
    record = await disputes_of(request).resolve(game_id, dispute_id, by, body.verdict, body.reason)
    context = app_context(request)
    await record_action(
        context.store, who, "dispute_resolved", f"{game_id}/{dispute_id}", f"{body.verdict}: {body.reason}"
    )
    return JSONResponse(record)


async def bundle(request: Request) -> Response:
    game_id = game_id_of(request)
    await party_of(request, game_id)
    dispute_id = _dispute_id(request)
    doc = await disputes_of(request).bundle(game_id, dispute_id)
    headers = {"Content-Disposition": f'attachment; filename="dispute-{game_id}-{dispute_id}.json"'}
    return JSONResponse(doc, headers=headers)


async def verdict(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    await party_of(request, game_id)
    return JSONResponse(await disputes_of(request).verdict(game_id, _dispute_id(request)))


async def open_list(request: Request) -> JSONResponse:
    await operator_of(request)
    limit = int_query(request, "limit", 50, low=1, high=MAX_PAGE)
    return JSONResponse(await disputes_of(request).open_disputes(limit, _open_cursor(request)))


def _open_cursor(request: Request) -> tuple[int, str] | None:
    """Where a page of open disputes starts: the ``next`` of the page before."""
    cursor = request.query_params.get("cursor")
    if cursor is None:
        return None
    found = OPEN_CURSOR.fullmatch(cursor)
    if found is None:
        raise invalid_cursor()
    return int(found.group(1)), f"{found.group(2)}/{found.group(3)}"


class OpenListQuery(msgspec.Struct):
    limit: Annotated[int, Meta(ge=1, le=100)] | UnsetType = UNSET
    cursor: (
        Annotated[
            str,
            Meta(
                pattern="^\\d{1,20}/[A-Za-z0-9_-]{1,64}/[0-9a-f]{16}$",
                description="The 'next' of the page before: <opened ms>/<game id>/<dispute id>",
            ),
        ]
        | UnsetType
    ) = UNSET


WHO = (
    "A seated player of the game (their seat token as a bearer, or the browser's ts_seat_<id> cookie)"
    " or an operator (the admin token, or an operator account's token). Anyone else: 403 "
    "not_a_player."
)
UNAUTHORIZED = "unauthorized: the token sent is no seat's of this game nor an operator's"
NOT_A_PLAYER = "not_a_player: neither a seated player of this game nor an operator"
SEALED = (
    "dispute_sealed: the bundle would show what is still hidden (the round's seed is secret, or the "
    "game runs and the round's last batch deals the next round); the message says which"
)

operations = [
    Operation(
        "POST",
        "/games/{game_id}/disputes",
        open_dispute,
        answers={201: Answer("The dispute's record", DisputeRecord)},
        summary="Open a dispute on a round (or the whole game), saying what is disputed; recorded at once",
        description=WHO,
        body=OpenDispute,
        errors=errors(
            401,
            403,
            404,
            409,
            422,
            s401=UNAUTHORIZED,
            s403=NOT_A_PLAYER,
            s404="game_not_found",
            s409=(
                "not_started (nothing played at the table yet), too_many_disputes (the table holds its cap, "
                "or the player has two open there)"
            ),
            s422="invalid_round, invalid_dispute_text, invalid_party",
        ),
        rate_limited=True,
    ),
    Operation(
        "GET",
        "/games/{game_id}/disputes",
        list_disputes,
        answers={200: Answer("{disputes: [summary]}", GameDisputes)},
        summary="The game's disputes, oldest first",
        description=WHO,
        errors=errors(
            401,
            403,
            404,
            s401=UNAUTHORIZED,
            s403=NOT_A_PLAYER,
            s404="game_not_found",
        ),
    ),
    Operation(
        "GET",
        "/games/{game_id}/disputes/{dispute_id}",
        read_dispute,
        answers={200: Answer("The dispute's record", DisputeRecord)},
        summary="A dispute: what is disputed, by whom, its events, its resolution, whether its bundle is "
        "ready",
        description=WHO,
        errors=errors(
            401,
            403,
            404,
            s401=UNAUTHORIZED,
            s403=NOT_A_PLAYER,
            s404="game_not_found, dispute_not_found",
        ),
    ),
    Operation(
        "POST",
        "/games/{game_id}/disputes/{dispute_id}/evidence",
        add_evidence,
        answers={200: Answer("The dispute's record", DisputeRecord)},
        summary="Add evidence while the dispute is open: the player's kept receipts (JSON) or a note",
        description=WHO,
        body=AddEvidence,
        errors=errors(
            401,
            403,
            404,
            409,
            422,
            s401=UNAUTHORIZED,
            s403=NOT_A_PLAYER,
            s404="game_not_found, dispute_not_found",
            s409="dispute_resolved, too_much_evidence, dispute_busy",
            s422="invalid_evidence, not_disputant",
        ),
        rate_limited=True,
    ),
    Operation(
        "POST",
        "/games/{game_id}/disputes/{dispute_id}/resolve",
        resolve,
        answers={200: Answer("The dispute's record", DisputeRecord)},
        summary="Resolve the dispute with a verdict and a reason (operators only, once)",
        description=WHO,
        body=ResolveDispute,
        errors=errors(
            401,
            403,
            404,
            409,
            422,
            s401=UNAUTHORIZED,
            s403="not_an_operator",
            s404="game_not_found, dispute_not_found",
            s409="dispute_resolved, dispute_busy",
            s422="invalid_reason, invalid_verdict",
        ),
        rate_limited=OPERATOR_RATE,
    ),
    Operation(
        "GET",
        "/games/{game_id}/disputes/{dispute_id}/bundle",
        bundle,
        answers={200: Answer("The bundle, as an attachment", DisputeBundle)},
        summary=(
            "The dispute's bundle (tablestream-dispute-bundle/1): the export cut at the end of the round's "
            "reveal, the keys, the log's proofs, the player's receipts, the seat's views; tablestream verify "
            "checks it offline"
        ),
        description=WHO,
        errors=errors(
            401,
            403,
            404,
            409,
            s401=UNAUTHORIZED,
            s403=NOT_A_PLAYER,
            s404="game_not_found, dispute_not_found",
            s409=SEALED,
        ),
    ),
    Operation(
        "GET",
        "/games/{game_id}/disputes/{dispute_id}/verdict",
        verdict,
        answers={200: Answer("{ok, checks: [{name, outcome, sentence}]}", BundleVerdict)},
        summary=(
            "The verifier's verdict on the bundle: each check (deal, commands, scores, receipts, views, log, "
            "export) passed, failed or not checked, with a sentence"
        ),
        description=WHO,
        errors=errors(
            401,
            403,
            404,
            409,
            s401=UNAUTHORIZED,
            s403=NOT_A_PLAYER,
            s404="game_not_found, dispute_not_found",
            s409=SEALED,
        ),
    ),
    Operation(
        "GET",
        "/operator/disputes",
        open_list,
        answers={200: Answer("{disputes: [summary], next}", OpenDisputes)},
        summary=(
            "Open disputes of every game, oldest first, a page at a time (operators only: 403 "
            "not_an_operator); 'next' is the cursor of the following page, null on the last"
        ),
        query=OpenListQuery,
        errors=errors(
            401,
            403,
            422,
            s401=UNAUTHORIZED,
            s403="not_an_operator",
            s422="invalid_query, invalid_cursor",
        ),
    ),
]
