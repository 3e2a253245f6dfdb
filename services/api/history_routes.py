"""Audit and export (docs/fairness.md): settle a disputed round from the recorded history."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from services.api.asset_routes import accepts_gzip
from services.api.chat_routes import export_with_chat
from services.api.context import app_context
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


routes = [
    Route("/.well-known/tablestream-keys", get_signing_keys, methods=["GET"]),
    Route("/games/{game_id}/audit", get_audit, methods=["GET"]),
    Route("/games/{game_id}/export", get_export, methods=["GET"]),
]
