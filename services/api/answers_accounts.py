"""The answers of accounts (registering, logging in and out, profiles, histories, leaderboards) as
msgspec Structs: the types of ``/openapi.json``'s answers (see ``services.api.answers``), as
``services.accounts.players`` and ``projections.ratings`` build them."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from services.api.answers import GameName, Seat

AccountId = Annotated[str, Meta(pattern="^[0-9a-f]{16}$", description="The account's id (16 hex digits)")]
Count = Annotated[int, Meta(ge=0)]


class Rating(msgspec.Struct):
    """An account's rating in one game (``projections.ratings.Skill.shown``)."""

    rating: Annotated[float, Meta(description="mu - 3 sigma: what leaderboards sort by")]
    mu: float
    sigma: float
    games: Count
    display: Annotated[int, Meta(ge=0, description="The number to show people")]
    provisional: bool


class AccountAnswer(msgspec.Struct):
    """``POST /accounts`` and ``/accounts/login``: the account, and its token unless the browser
    asked for the cookie (``"cookie": true``)."""

    account_id: AccountId
    name: str
    token: Annotated[str, Meta(description="The account token (not with 'cookie': true)")] | UnsetType = UNSET


class LoggedOut(msgspec.Struct):
    """``POST /accounts/logout``: the account, or only ``logged_out`` when a cookie's token no longer
    worked (it is cleared all the same)."""

    logged_out: Literal[True]
    account_id: AccountId | UnsetType = UNSET
    name: str | UnsetType = UNSET


class PasswordSet(msgspec.Struct):
    account_id: AccountId
    name: str
    has_password: Literal[True]


class Profile(msgspec.Struct):
    """A public profile: the rating in each game the account has played rated games of."""

    account_id: AccountId
    name: str
    ratings: Annotated[dict[str, Rating], Meta(description="By game name")]
    history: Annotated[str, Meta(description="The path of the account's history")]


class OwnProfile(Profile):
    """``GET /accounts/me``: the public profile, and whether the account has a password."""

    has_password: bool


class RecordAccount(msgspec.Struct):
    id: AccountId
    name: str


class RatingChange(msgspec.Struct):
    before: Rating
    after: Rating


class RecordSeat(msgspec.Struct):
    """A seat of a finished game: its account (null: an anonymous seat), its rating change (null:
    unrated)."""

    seat: Seat
    name: str
    account: RecordAccount | None
    score: int
    rank: Annotated[int, Meta(ge=1)]
    winner: bool
    forfeit: Literal["left", "timeouts"] | None
    rating: RatingChange | None


class HistoryGame(msgspec.Struct):
    """A finished game as recorded (``projections.ratings.finish_record``); ``you``: the account's
    own seat."""

    game_id: str
    game: GameName
    title: str
    finished_at: Annotated[float, Meta(description="Unix seconds")]
    rated: bool
    unrated_reason: Literal["hints", "practice", "bots", "anonymous_seats"] | None
    seats: list[RecordSeat]
    replay: str
    export: str
    you: RecordSeat | None


class AccountHistory(msgspec.Struct):
    account_id: AccountId
    total: Count
    offset: Count
    limit: Annotated[int, Meta(ge=1)]
    games: list[HistoryGame]


class LeaderboardEntry(msgspec.Struct):
    """A listed account and its rating (the rating's fields are missing only while a rating is being
    written)."""

    rank: Annotated[int, Meta(ge=1)]
    account_id: AccountId
    name: str | None
    rating: float | UnsetType = UNSET
    mu: float | UnsetType = UNSET
    sigma: float | UnsetType = UNSET
    games: Count | UnsetType = UNSET
    display: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    provisional: bool | UnsetType = UNSET


class Leaderboard(msgspec.Struct):
    game: GameName
    total: Annotated[Count, Meta(description="How many established accounts it lists")]
    offset: Count
    limit: Annotated[int, Meta(ge=1)]
    entries: list[LeaderboardEntry]
    provisional_hidden: Annotated[Count, Meta(description="Rated accounts not listed (provisional)")]
