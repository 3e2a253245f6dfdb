"""Players who come back: accounts, login, public profiles, histories, leaderboards."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Route

from domain.accounts import AccountState
from services.api.bodies import Login, Register, SetPassword
from services.api.context import app_context
from services.api.http import MAX_VERSION, JSONResponse, bearer, int_query, read_body
from services.errors import NotFoundError, UnauthorizedError
from services.players import public_account

MAX_PAGE = 100


async def account_of(request: Request) -> AccountState:
    """The account of the request's bearer token (401 without one)."""
    token = bearer(request)
    if token is None:
        raise UnauthorizedError("unauthorized", "Send the account token as 'Authorization: Bearer <token>'.")
    return await app_context(request).accounts.authenticate(token)


async def register(request: Request) -> JSONResponse:
    body = await read_body(request, Register)
    account, token = await app_context(request).accounts.register(body.name, body.password)
    return JSONResponse({**public_account(account), "token": token}, status_code=201)


async def login(request: Request) -> JSONResponse:
    body = await read_body(request, Login)
    account, token = await app_context(request).accounts.login(body.name, body.password)
    return JSONResponse({**public_account(account), "token": token})


async def me(request: Request) -> JSONResponse:
    account = await account_of(request)
    profile = await app_context(request).players.profile(account)
    return JSONResponse({**profile, "has_password": account.password_hash is not None})


async def set_password(request: Request) -> JSONResponse:
    account = await account_of(request)
    body = await read_body(request, SetPassword)
    await app_context(request).accounts.set_password(account, body.password)
    return JSONResponse({**public_account(account), "has_password": True})


async def profile(request: Request) -> JSONResponse:
    context = app_context(request)
    account = await context.accounts.find(request.path_params["name_or_id"])
    return JSONResponse(await context.players.profile(account))


async def history(request: Request) -> JSONResponse:
    context = app_context(request)
    account_id: str = request.path_params["account_id"]
    if await context.accounts.load(account_id) is None:
        raise NotFoundError("account_not_found", f"There is no account {account_id!r}.")
    offset = int_query(request, "offset", 0, high=MAX_VERSION)
    limit = int_query(request, "limit", 20, low=1, high=MAX_PAGE)
    return JSONResponse(await context.players.history(account_id, offset, limit))


async def leaderboard(request: Request) -> JSONResponse:
    offset = int_query(request, "offset", 0, high=MAX_VERSION)
    limit = int_query(request, "limit", 20, low=1, high=MAX_PAGE)
    game: str = request.path_params["game"]
    return JSONResponse(await app_context(request).players.leaderboard(game, offset, limit))


routes = [
    Route("/accounts", register, methods=["POST"]),
    Route("/accounts/login", login, methods=["POST"]),
    Route("/accounts/me", me, methods=["GET"]),
    Route("/accounts/me/password", set_password, methods=["POST"]),
    Route("/accounts/{account_id}/history", history, methods=["GET"]),
    Route("/accounts/{name_or_id}", profile, methods=["GET"]),
    Route("/leaderboards/{game}", leaderboard, methods=["GET"]),
]
