"""Audit and export (docs/fairness.md): settle a disputed round from the recorded history."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from services.api.answers import SigningKeys
from services.api.answers_history import Export, GameAudit
from services.api.asset_routes import accepts_gzip
from services.api.chat_routes import export_with_chat
from services.api.context import app_context
from services.api.contract import BEARER, Answer, Operation, errors
from services.api.http import JSONResponse, caller_of, game_id_of


async def get_audit(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    caller = await caller_of(request, game_id)
    return JSONResponse(await app_context(request).queries.audit(game_id, caller))


async def get_export(request: Request) -> Response:
    """Built off the event loop once per (game, version) and kept encoded and gzipped
    (``services.table.queries``): a request costs a copy, not a build nor a compression."""
    if request.query_params.get("chat") == "1":  # with the table's chat (services.api.chat_routes)
        return await export_with_chat(request)
    export = await app_context(request).queries.export(game_id_of(request))
    headers = {"Vary": "Accept-Encoding"}
    if accepts_gzip(request.headers.get("accept-encoding", "")):
        headers["Content-Encoding"] = "gzip"  # the compression middleware leaves it as it is
        return Response(export.gzipped, headers=headers, media_type="application/json")
    return Response(export.body, headers=headers, media_type="application/json")


KEYS_CACHE = "public, max-age=300"  # a rotation adds a key; receipts it signs verify after this


async def get_signing_keys(request: Request) -> JSONResponse:
    """``GET /.well-known/tablestream-keys``: the public keys that sign receipts, with their validity
    periods and signed-note vkeys (``services.fairness.signing.KeyRing.public_document``); made on first
    use."""
    ring = await app_context(request).receipts.keys()
    return JSONResponse(ring.public_document(), headers={"Cache-Control": KEYS_CACHE})


operations = [
    Operation(
        "GET",
        "/.well-known/tablestream-keys",
        get_signing_keys,
        answers={200: Answer("The keys", SigningKeys)},
        summary=(
            "The public keys that sign receipts, with their validity periods and signed-note vkeys (cacheable"
            " for 5 minutes; old keys stay listed after a rotation)"
        ),
    ),
    Operation(
        "GET",
        "/games/{game_id}/audit",
        get_audit,
        answers={200: Answer("The audit", GameAudit)},
        summary="Per finished round: seed, chain check, chance outcomes, events",
        security=BEARER,
        errors=errors(401, 404),
    ),
    Operation(
        "GET",
        "/games/{game_id}/export",
        get_export,
        answers={200: Answer("The export; its 'keys' are those of /.well-known/tablestream-keys", Export)},
        summary="A finished game as one self-contained document for the offline verifier",
        description=(
            "With the query 'chat=1': plus a 'chat' section (the table's chat, its own hash chain, checked by"
            " 'tablestream verify')"
        ),
        errors=errors(404, 409, s409="Game not finished"),
    ),
]
