"""The operator's console in ``/openapi.json`` (``services.api.operator_routes``): every route needs
an operator (the admin token as a bearer, or an operator account's token or ``ts_account`` cookie)
and answers anyone else 403 ``not_an_operator``."""

from __future__ import annotations

from typing import Any

import msgspec

from services.api.bodies import VISIBLE, OperatorReason
from services.api.operator_routes import MAX_CURSOR, MAX_PAGE, MAX_QUERY

REF = "#/components/schemas/{name}"
SECURITY: dict[str, Any] = {
    # no 'security' object: that promises a 401 for a bad token, and the console answers every caller
    # who is not an operator 403 'not_an_operator', whatever was sent (it says nothing about the token)
    "description": "Operators only: 'Authorization: Bearer <admin token>', or the token (bearer or the "
    "'ts_account' cookie) of an account granted the role with 'tablestream operator grant NAME'. "
    "Anyone else: 403 not_an_operator."
}
ERROR = {"application/json": {"schema": {"$ref": REF.format(name="Error")}}}
REASON_BODY = {
    "required": True,
    "content": {"application/json": {"schema": {"$ref": REF.format(name="OperatorReason")}}},
}
BODY_ERRORS = {
    "400": "Malformed JSON",
    "413": "The request body is too large",
    "415": "The body is not declared 'Content-Type: application/json' (unsupported_media_type)",
}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": ERROR}


def _ok(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"type": "object"}}}}


FORBIDDEN = _error("not_an_operator: no token, or one that is neither the admin token nor an operator's")


def _get(summary: str, parameters: list[dict[str, Any]] | None = None, **errors: str) -> dict[str, Any]:
    responses = {"200": _ok(summary), "403": FORBIDDEN, **{k[1:]: _error(v) for k, v in errors.items()}}
    return {"get": {**SECURITY, "summary": summary, "parameters": parameters or [], "responses": responses}}


def _post(summary: str, **errors: str) -> dict[str, Any]:
    responses = {
        "200": _ok(summary),
        "403": FORBIDDEN,
        **{status: _error(text) for status, text in BODY_ERRORS.items()},
        **{k[1:]: _error(v) for k, v in errors.items()},
    }
    return {"post": {**SECURITY, "summary": summary, "requestBody": REASON_BODY, "responses": responses}}


def _path(name: str, pattern: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    if pattern:
        schema["pattern"] = pattern
    return {"name": name, "in": "path", "required": True, "schema": schema}


QUERY = {
    "name": "q",
    "in": "query",
    "required": True,
    "schema": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY, "pattern": VISIBLE},
}
BEFORE = {
    "name": "before",
    "in": "query",
    "required": False,
    "schema": {"type": "string", "pattern": r"^\d{1,20}-\d{1,20}$"},
    "description": "Only entries older than this id (the older name of 'cursor')",
}
PAGING = (
    "One page: 'next' is the cursor of the following page, null on the last; send it back as "
    "'cursor' (422 invalid_cursor for one that is not a 'next' of this list)."
)


def _cursor(what: str) -> dict[str, Any]:
    return {
        "name": "cursor",
        "in": "query",
        "required": False,
        "schema": {"type": "string", "minLength": 1, "maxLength": MAX_CURSOR},
        "description": f"The 'next' of the page before: {what}",
    }


LOG_CURSOR = {
    **_cursor("the id of the last entry shown; only older entries follow"),
    "schema": {"type": "string", "pattern": r"^\d{1,20}-\d{1,20}$"},
}


def _limit(default: int) -> dict[str, Any]:
    return {
        "name": "limit",
        "in": "query",
        "required": False,
        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE},
        "description": f"At most this many (default {default})",
    }


GAME_ID = _path("game_id", "^[A-Za-z0-9_-]{1,64}$")
ACCOUNT = _path("account")
REPORT_ID = _path("report_id")

OPERATOR_PATHS: dict[str, Any] = {
    "/operator/me": _get("The operator asking: {operator: 'admin' or an account id, name}"),
    "/operator/figures": _get(
        "Live figures: ready, health (ok or /healthz's reason), lag_ms, tables_waiting, tables_running, "
        "games_lagging, chat_reports, queue_projections, queue_lifecycle, queue_bots, queue_review"
    ),
    "/operator/tables": _get(
        "Find tables: {tables, next}: on the first page the one with this id, then the waiting or "
        "running tables, most recently changed first, where a seat's name contains it "
        f"(case-insensitive). {PAGING}",
        [QUERY, _cursor("where the following page starts in the open tables"), _limit(20)],
        s422="invalid_query, invalid_cursor",
    ),
    "/operator/tables/{game_id}": {
        "parameters": [GAME_ID],
        **_get("A table: status, seats, names, accounts", s404="game_not_found"),
    },
    "/operator/tables/{game_id}/close": {
        "parameters": [GAME_ID],
        **_post(
            "Close a waiting or running table: table_closed in its stream (with the reason and the "
            "operator), its seeds revealed, its timers stopped; answers the signed receipt (as a command)",
            s404="game_not_found",
            s409="table_closed, game_over",
            s422="invalid_reason",
        ),
    },
    "/operator/players": _get(
        "Find accounts: {players: [{account_id, name, banned, ban_reason, match}], next}: the accounts "
        "whose name begins with 'q' or with a name that looks like it (confusables folded as for the "
        "names' claims), in that folded order; match is exact, prefix, lookalike, or id for an "
        f"account id. {PAGING}",
        [QUERY, _cursor("the last account shown"), _limit(20)],
        s422="invalid_query, invalid_cursor",
    ),
    "/operator/players/{account}": {
        "parameters": [ACCOUNT],
        **_get(
            "An account's card, by name or id: banned, ban_reason, operator, has_password, "
            "games_played, recent_games (the last ten finished: game_id, game, title, finished_at, "
            "rated, rank, score, players, replay)",
            s404="account_not_found",
        ),
    },
    "/operator/accounts/{account}/ban": {
        "parameters": [ACCOUNT],
        **_post(
            "Ban an account (by name or id): account_banned in its stream; its logins and tokens are "
            "refused with 403 account_banned",
            s404="account_not_found",
            s409="already_banned",
            s422="invalid_reason",
        ),
    },
    "/operator/accounts/{account}/unban": {
        "parameters": [ACCOUNT],
        **_post(
            "Lift a ban: account_unbanned in its stream",
            s404="account_not_found",
            s409="not_banned",
            s422="invalid_reason",
        ),
    },
    "/operator/reports": _get(
        "Chat reports, newest first, with the reported messages' text and who handled each: "
        f"{{reports, next}}. {PAGING}",
        [LOG_CURSOR, BEFORE, _limit(20)],
        s422="invalid_query, invalid_cursor",
    ),
    "/operator/reports/{report_id}/handled": {
        "parameters": [REPORT_ID],
        **_post(
            "Mark a chat report handled, with a note (the reason field)",
            s404="report_not_found",
            s409="report_handled",
            s422="invalid_reason",
        ),
    },
    "/operator/audit": _get(
        "The audit log, newest first: {entries: [{id, at, operator, name, action, target, reason}], "
        f"next}}. {PAGING}",
        [LOG_CURSOR, BEFORE, _limit(50)],
        s422="invalid_query, invalid_cursor",
    ),
}


def operator_components() -> dict[str, Any]:
    (_,), components = msgspec.json.schema_components([OperatorReason], ref_template=REF)
    return components
