"""Players who come back: accounts, login, public profiles, histories, leaderboards.

A browser asks for ``"cookie": true`` when it registers or logs in: the token then travels only in
the HttpOnly ``ts_account`` cookie (``services.api.http``), never in a body its scripts could read,
and every route below that needs the account, and joining a table, accept that cookie when there is
no ``Authorization`` header."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, UnsetType
from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import Request

from domain.accounts import AccountState
from projections.ratings import DISPLAY_BASE, DISPLAY_SCALE, PROVISIONAL_GAMES, PROVISIONAL_OPPONENTS
from services.accounts.names import RESERVED, normalise
from services.accounts.players import public_account
from services.api.answers_accounts import (
    AccountAnswer,
    AccountHistory,
    Leaderboard,
    LoggedOut,
    OwnProfile,
    PasswordSet,
    Profile,
)
from services.api.bodies import Empty, Login, Register, SetPassword
from services.api.context import app_context
from services.api.contract import ACCOUNT, Answer, Operation, errors
from services.api.http import (
    MAX_VERSION,
    JSONResponse,
    account_token,
    clear_account_cookie,
    client_address,
    int_query,
    read_body,
    set_account_cookie,
)
from services.errors import AppError, NotFoundError, UnauthorizedError, UnavailableError

MAX_PAGE = 100


NO_TOKEN = "Send the account token as 'Authorization: Bearer <token>' (or log in with a browser)."


async def account_of(request: Request) -> AccountState:
    """The account of the request's bearer token, else of its ``ts_account`` cookie (401 without one)."""
    found = account_token(request)
    if found is None:
        raise UnauthorizedError("unauthorized", NO_TOKEN)
    return await app_context(request).accounts.authenticate(found[0])


def issued(request: Request, account: AccountState, token: str, cookie: bool, status: int) -> JSONResponse:
    """The answer that hands out a token: in the body, or (``cookie``) only in the HttpOnly cookie."""
    if not cookie:
        return JSONResponse({**public_account(account), "token": token}, status_code=status)
    response = JSONResponse(public_account(account), status_code=status)
    set_account_cookie(request, response, token)
    return response


async def register(request: Request) -> JSONResponse:
    """A new account; at most ``register_rate`` (default 20 a day) per client address, counted once
    the name is known to be free (a name refused costs nothing)."""
    body = await read_body(request, Register)
    context = app_context(request)
    client = client_address(request)
    account, token = await context.accounts.register(
        body.name, body.password, admit=lambda: context.rate_limits.hit("register", client)
    )
    return issued(request, account, token, body.cookie, 201)


async def login(request: Request) -> JSONResponse:
    """A fresh token for a name and its password, within ``LoginGuard``'s limits (429
    ``rate_limited`` or ``login_throttled``, counted before any Argon2 work)."""
    body = await read_body(request, Login)
    context = app_context(request)
    client, name = client_address(request), normalise(body.name)
    name_counted = await context.rate_limits.login.attempt(client, name)
    try:
        account, token = await context.accounts.login(body.name, body.password)
    except UnavailableError as error:
        if error.code == "password_check_busy":  # no password was checked: the attempt does not count
            await context.rate_limits.login.not_checked(client, name, name_counted)
        raise
    await context.rate_limits.login.succeeded(client, name)
    return issued(request, account, token, body.cookie, 200)


async def logout(request: Request) -> JSONResponse:
    """Revoke the caller's account token and clear the cookie. A cookie whose token no longer works
    is only cleared (the browser is logged out either way); no token, or a bad bearer token, is a 401."""
    await read_body(request, Empty)
    found = account_token(request)
    if found is None:
        raise UnauthorizedError("unauthorized", NO_TOKEN)
    token, source = found
    try:
        account = await app_context(request).accounts.log_out(token)
        body = {**public_account(account), "logged_out": True}
    except AppError as error:
        if source == "header" or error.code not in ("invalid_account_token", "account_banned"):
            raise
        body = {"logged_out": True}
    response = JSONResponse(body)
    if source == "cookie":
        clear_account_cookie(request, response)
    return response


async def me(request: Request) -> JSONResponse:
    account = await account_of(request)
    profile = await app_context(request).players.profile(account)
    return JSONResponse({**profile, "has_password": account.password_hash is not None})


async def set_password(request: Request) -> JSONResponse:
    """Set (or change) the password. An account that has one must send it as ``current_password``,
    checked within the login limits like a login; every other token of the account is revoked, the
    caller's (header or cookie) keeps working."""
    account = await account_of(request)
    found = account_token(request)
    assert found is not None  # account_of found it
    body = await read_body(request, SetPassword)
    context = app_context(request)
    client = client_address(request)
    guessing = account.password_hash is not None and body.current_password is not None
    name_counted = guessing and await context.rate_limits.login.attempt(client, account.normalised)
    try:
        await context.accounts.check_current_password(account, body.current_password)
    except UnavailableError as error:
        if guessing and error.code == "password_check_busy":  # not checked: the attempt does not count
            await context.rate_limits.login.not_checked(client, account.normalised, name_counted)
        raise
    if guessing:
        await context.rate_limits.login.succeeded(client, account.normalised)
    await context.accounts.set_password(account, body.password, keep_token=found[0])
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


class ProfileRef(Convertor[str]):
    """A name or an account id in ``/accounts/<name or id>``, never one of the fixed words of the
    paths beside it (``login``, ``logout``, ``me``: ``services.accounts.names.RESERVED``, which no account may
    be called), so that ``/accounts/logout`` is only the log-out route, for every method."""

    regex = "(?!(?:" + "|".join(sorted(RESERVED)) + ")$)[^/]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("profile_ref", ProfileRef())


class HistoryQuery(msgspec.Struct):
    offset: Annotated[int, Meta(ge=0, le=MAX_VERSION, description="Skip this many")] | UnsetType = UNSET
    limit: (
        Annotated[int, Meta(ge=1, le=MAX_PAGE, description="At most this many (default 20)")] | UnsetType
    ) = UNSET


RATING_FIELDS = (
    "Every rating is {rating, mu, sigma, games, display, provisional}: 'rating' is the ordinal "
    "mu - 3 sigma that leaderboards sort by (0 for a new player, below 0 after one loss); 'display' "
    f"is the number to show people, max(0, round({DISPLAY_BASE} + {DISPLAY_SCALE} * rating)), in the "
    f"same order; 'provisional' is true until {PROVISIONAL_GAMES} rated games in that game against "
    f"{PROVISIONAL_OPPONENTS} distinct established opponents."
)

BROWSER_COOKIE = (
    "With 'cookie': true (browsers) the token is not in the body: the answer sets it as the HttpOnly,"
    " SameSite=Strict cookie 'ts_account' (Max-Age 180 days), which /accounts/me, "
    "/accounts/me/password, /accounts/logout and joining a table accept without a header."
)

operations = [
    Operation(
        "POST",
        "/accounts",
        register,
        answers={
            201: Answer("account_id, name and the account token (not with 'cookie': true)", AccountAnswer)
        },
        summary="Register a display name (unique up to case, width and lookalike characters)",
        description=BROWSER_COOKIE,
        body=Register,
        errors=errors(
            409,
            422,
            s409="name_taken",
            s422=(
                "invalid_name, name_confusable (its 'like' names the registered name), name_mixed_script, "
                "invalid_password"
            ),
        ),
        rate_limited=True,
    ),
    Operation(
        "POST",
        "/accounts/login",
        login,
        answers={200: Answer("account_id, name and a new token (not with 'cookie': true)", AccountAnswer)},
        summary="A fresh account token for a name and its password",
        description=BROWSER_COOKIE + " Limited per client address and per account name (429 'rate_limited' "
        "or 'login_throttled' with Retry-After); 503 'password_check_busy' when too many passwords are being "
        "checked at once.",
        body=Login,
        errors=errors(401, s401="invalid_credentials"),
        rate_limited=True,
    ),
    Operation(
        "POST",
        "/accounts/logout",
        logout,
        answers={200: Answer("account_id, name, logged_out", LoggedOut)},
        summary="Revoke the caller's account token (its other tokens keep working)",
        description=(
            "By the bearer header, else the 'ts_account' cookie, which the answer clears; a cookie whose "
            "token no longer works is only cleared (200 {'logged_out': true})."
        ),
        security=ACCOUNT,
        body=Empty,
        errors=errors(401, s401="No account token, or a bad bearer token"),
    ),
    Operation(
        "GET",
        "/accounts/me",
        me,
        answers={200: Answer("The account", OwnProfile)},
        summary="The token's account: public profile, ratings, has_password",
        description=RATING_FIELDS,
        security=ACCOUNT,
        errors=errors(
            401,
            403,
            s401="Bad or missing account token",
            s403="account_banned: an operator banned the account",
        ),
    ),
    Operation(
        "POST",
        "/accounts/me/password",
        set_password,
        answers={200: Answer("Done: the account", PasswordSet)},
        summary="Set or change the password (Argon2id-hashed; enables /accounts/login)",
        description=(
            "An account that has a password must send it as 'current_password' (checked within the login "
            "limits). Every other token of the account is revoked; the caller's keeps working."
        ),
        security=ACCOUNT,
        body=SetPassword,
        errors=errors(
            401,
            403,
            422,
            s401="Bad account token",
            s403="wrong_current_password",
            s422="invalid_password, current_password_required",
        ),
        rate_limited=True,
    ),
    Operation(
        "GET",
        "/accounts/{account_id}/history",
        history,
        answers={200: Answer("total, offset, limit, games", AccountHistory)},
        summary="Finished games of an account, newest first: seats, result, rating change, links",
        description=RATING_FIELDS,
        query=HistoryQuery,
        errors=errors(404, 422, s404="account_not_found"),
    ),
    Operation(
        "GET",
        "/accounts/{name_or_id}",
        profile,
        answers={200: Answer("The profile", Profile)},
        summary="A public profile: account id, display name, rating per game",
        description=RATING_FIELDS,
        errors=errors(404, s404="account_not_found"),
        route_path="/accounts/{name_or_id:profile_ref}",
    ),
    Operation(
        "GET",
        "/leaderboards/{game}",
        leaderboard,
        answers={200: Answer("total (listed), offset, limit, entries, provisional_hidden", Leaderboard)},
        summary="Established rated accounts of a game, best first (rating = mu - 3 sigma)",
        description=(
            RATING_FIELDS + " Provisional players are not listed: 'provisional_hidden' counts them."
        ),
        query=HistoryQuery,
        errors=errors(404, 422, s404="unknown_game"),
    ),
]

routes = [operation.route() for operation in operations]
"""The routes of these declarations (``services.api.app`` builds every route the same way)."""
