"""Disputes in ``/openapi.json`` (``services.api.dispute_routes``, docs/api.md "Disputes")."""

from __future__ import annotations

from typing import Any

import msgspec

from services.api.bodies import AddEvidence, OpenDispute, ResolveDispute

REF = "#/components/schemas/{name}"
ERROR = {"application/json": {"schema": {"$ref": REF.format(name="Error")}}}
WHO = (
    "A seated player of the game (their seat token as a bearer, or the browser's ts_seat_<id> cookie) "
    "or an operator (the admin token, or an operator account's token). Anyone else: 403 not_a_player."
)
BODY_ERRORS = {
    "400": "Malformed JSON",
    "413": "The request body is too large",
    "415": "The body is not declared 'Content-Type: application/json' (unsupported_media_type)",
}
SEALED = (
    "dispute_sealed: the bundle would show what is still hidden (the round's seed is secret, or the game "
    "runs and the round's last batch deals the next round); the message says which"
)


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": ERROR}


def _ok(description: str, status: str = "200") -> dict[str, Any]:
    return {
        status: {"description": description, "content": {"application/json": {"schema": {"type": "object"}}}}
    }


def _path(name: str, pattern: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string", "pattern": pattern}}


GAME_ID = _path("game_id", "^[A-Za-z0-9_-]{1,64}$")
DISPUTE_ID = _path("dispute_id", "^[0-9a-f]{16}$")
FORBIDDEN = _error("not_a_player: neither a seated player of this game nor an operator")
UNAUTHORIZED = _error("unauthorized: the token sent is no seat's of this game nor an operator's")


def _get(summary: str, ok: str, **errors: str) -> dict[str, Any]:
    answers = {k[1:]: _error(v) for k, v in errors.items()}
    responses = {**_ok(ok), "401": UNAUTHORIZED, "403": FORBIDDEN, **answers}
    return {"get": {"summary": summary, "description": WHO, "responses": responses}}


def _post(
    summary: str, body: str, ok: dict[str, Any], forbidden: str | None = None, **errors: str
) -> dict[str, Any]:
    responses = {
        **ok,
        "401": UNAUTHORIZED,
        "403": _error(forbidden) if forbidden else FORBIDDEN,
        **{status: _error(text) for status, text in BODY_ERRORS.items()},
        **{k[1:]: _error(v) for k, v in errors.items()},
    }
    request = {"required": True, "content": {"application/json": {"schema": {"$ref": REF.format(name=body)}}}}
    return {"post": {"summary": summary, "description": WHO, "requestBody": request, "responses": responses}}


DISPUTE_PATHS_RATE_LIMITED = {
    # a player's dispute writes count against their address's dispute_rate (429 rate_limited past it)
    ("/games/{game_id}/disputes", "post"),
    ("/games/{game_id}/disputes/{dispute_id}/evidence", "post"),
}
DISPUTE_PATHS: dict[str, Any] = {
    "/games/{game_id}/disputes": {
        "parameters": [GAME_ID],
        **_post(
            "Open a dispute on a round (or the whole game), saying what is disputed; recorded at once",
            "OpenDispute",
            _ok("The dispute's record", "201"),
            s404="game_not_found",
            s409="not_started (nothing played at the table yet), too_many_disputes (the table holds "
            "its cap, or the player has two open there)",
            s422="invalid_round, invalid_dispute_text, invalid_party",
        ),
        **_get("The game's disputes, oldest first", "{disputes: [summary]}", s404="game_not_found"),
    },
    "/games/{game_id}/disputes/{dispute_id}": {
        "parameters": [GAME_ID, DISPUTE_ID],
        **_get(
            "A dispute: what is disputed, by whom, its events, its resolution, whether its bundle is ready",
            "The dispute's record",
            s404="game_not_found, dispute_not_found",
        ),
    },
    "/games/{game_id}/disputes/{dispute_id}/evidence": {
        "parameters": [GAME_ID, DISPUTE_ID],
        **_post(
            "Add evidence while the dispute is open: the player's kept receipts (JSON) or a note",
            "AddEvidence",
            _ok("The dispute's record"),
            s404="game_not_found, dispute_not_found",
            s409="dispute_resolved, too_much_evidence, dispute_busy",
            s422="invalid_evidence, not_disputant",
        ),
    },
    "/games/{game_id}/disputes/{dispute_id}/resolve": {
        "parameters": [GAME_ID, DISPUTE_ID],
        **_post(
            "Resolve the dispute with a verdict and a reason (operators only, once)",
            "ResolveDispute",
            _ok("The dispute's record"),
            forbidden="not_an_operator",
            s404="game_not_found, dispute_not_found",
            s409="dispute_resolved, dispute_busy",
            s422="invalid_reason, invalid_verdict",
        ),
    },
    "/games/{game_id}/disputes/{dispute_id}/bundle": {
        "parameters": [GAME_ID, DISPUTE_ID],
        **_get(
            "The dispute's bundle (tablestream-dispute-bundle/1): the export cut at the end of the round's "
            "reveal, the keys, the log's proofs, the player's receipts, the seat's views; tablestream verify "
            "checks it offline",
            "The bundle, as an attachment",
            s404="game_not_found, dispute_not_found",
            s409=SEALED,
        ),
    },
    "/games/{game_id}/disputes/{dispute_id}/verdict": {
        "parameters": [GAME_ID, DISPUTE_ID],
        **_get(
            "The verifier's verdict on the bundle: each check (deal, commands, scores, receipts, views, log, "
            "export) passed, failed or not checked, with a sentence",
            "{ok, checks: [{name, outcome, sentence}]}",
            s404="game_not_found, dispute_not_found",
            s409=SEALED,
        ),
    },
    "/operator/disputes": {
        "get": {
            "summary": "Open disputes of every game, oldest first, a page at a time (operators only: 403 "
            "not_an_operator); 'next' is the cursor of the following page, null on the last",
            "parameters": [
                {
                    "name": "limit",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "integer", "minimum": 1, "maximum": 100},
                },
                {
                    "name": "cursor",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string", "pattern": r"^\d{1,20}/[A-Za-z0-9_-]{1,64}/[0-9a-f]{16}$"},
                    "description": "The 'next' of the page before: <opened ms>/<game id>/<dispute id>",
                },
            ],
            "responses": {
                **_ok("{disputes: [summary], next}"),
                "401": UNAUTHORIZED,
                "403": _error("not_an_operator"),
                "422": _error("invalid_query, invalid_cursor"),
            },
        }
    },
}


def dispute_components() -> dict[str, Any]:
    _, components = msgspec.json.schema_components(
        [OpenDispute, AddEvidence, ResolveDispute], ref_template=REF
    )
    return components
