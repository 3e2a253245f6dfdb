"""Quick play: "Play now" for a game and a player count queues a ticket; the matcher seats the queued
tickets of one queue together at a new public table.

Tickets (``QuickPlay``, the API's side): a ticket carries its holder's name, the account (if the
request had an account token) and that account's rating in the game (``display_rating``; a new
account counts as a new player), and whether its holder agrees to bots after the wait. Its secret
is known only to its holder (stored as SHA-256); the seat token is handed to the holder once.
Abandoned tickets (nobody asked about them for ``ABANDON_MS``) are removed, so a closed tab never
takes a seat at a table.

The matcher (``Matcher.run_pass``, run by the worker's ``workers.quickplay.QuickplayLoop``):

1. finishes every match it had claimed but not finished (a matcher killed mid-match);
2. per queue, removes abandoned tickets and times out those past ``MAX_WAIT_MS``;
3. plans groups (``plan``): the oldest ticket first, with the tickets closest to its rating within a
   window that widens with the wait (``RATING_WINDOW`` + ``RATING_WIDENING`` per second, unbounded
   once anyone of the pair waited ``WAIT_BOUND_MS``); a full group is seated together; a ticket
   that waited ``WAIT_BOUND_MS`` and agreed to bots is seated with the others who agreed, and bots
   fill the rest; one that did not agree keeps waiting until ``MAX_WAIT_MS``, then times out;
4. claims each group's tickets in one Lua step (all still queued, or none: a cancel that got in
   first wins), with the match's table id chosen there, then finishes the match: keeps a seat token
   per ticket in the match, creates the table with that id and every ticket seated in the create
   write itself (a join record per ticket, client seed ``qp-<ticket id>``, and bots in the other
   seats if agreed: ``GameCommands.create`` with ``seats``), so nobody outside the match ever sees
   a free seat at it, and marks the tickets seated in one Lua step. The create script writes
   nothing for an id that exists, so every step is a re-runnable one and a matcher killed anywhere
   finishes the same match after its restart: no one is lost, no one seated twice, no second
   table. A match whose create is refused (nothing is written then) gives its tickets back to
   their queue, in their old places, rather than being tried for ever.

The tables are public ones with the public turn timer, watched and replayed as any table is.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import msgspec
import structlog

from domain.games import spec
from domain.kernel import Rejected
from domain.table import Account
from projections.ratings import NEW_PLAYER, Skill, display_rating
from services.accounts.names import checked_seat_name
from services.errors import AppError, ConflictError, InvalidError, NotFoundError, from_rejection
from services.store import accounts as store_accounts
from services.store import quickplay as store_ops
from services.store import retention, your_tables
from services.store.event_store import EventStore
from services.store.ratings import ratings_of
from services.table.commands import GameCommands, Reservation
from services.table.lifecycle import Clock, wall_clock_ms

WAIT_BOUND_MS = 30_000
"""The bound: players of the same queue are seated together once one of them waited this long
(the rating window is then unbounded), and bots are offered from then on."""
MAX_WAIT_MS = 300_000
"""A ticket still queued after this (its holder did not agree to bots, and no one came) times out."""
ABANDON_MS = 30_000
"""A queued ticket whose holder has not asked about it for this long is removed (a closed tab)."""
SEATED_TTL_S = 600
"""How long a seated or timed-out ticket stays readable."""
RATING_WINDOW = 100
RATING_WIDENING = 10  # rating points per second waited
UNRATED_GAP = 150
"""How far apart an account and an anonymous player count (anonymous players carry no rating)."""
MARKER = "qp-"

log = structlog.get_logger("tablestream.quickplay")


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def check_queue(game: str, players: int) -> None:
    """A known game (else 422 ``unknown_game``) and a player count its table takes without options
    (else 422 ``bad_player_count``)."""
    try:
        found = spec(game)
    except Rejected as rejected:
        raise from_rejection(rejected) from None
    if not found.min_players <= players <= found.max_players:
        raise InvalidError(
            "bad_player_count",
            f"Quick play seats {found.min_players} to {found.max_players} players at {found.name}.",
        )


# -- planning: pure ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Waiting:
    """A queued ticket as the planner sees it. ``holders``: who stands behind it (its account): no
    two tickets of one group share one. ``client``: a digest of the network it was queued from
    (``client_digest``; empty: not known): a group that holds an account's ticket, a rated table,
    never holds two tickets of one network, so one client cannot fill a rated table with its own
    tickets and feed a rating. A table of guests only is rated for no one: people behind one
    home router may be seated together there."""

    id: str
    arrived_ms: int
    rating: int | None
    bots: bool
    holders: frozenset[str] = frozenset()
    client: str = ""


@dataclass(frozen=True)
class Group:
    tickets: tuple[Waiting, ...]
    bots: bool  # bots fill the free seats


def window(ticket: Waiting, now_ms: int) -> float:
    waited = now_ms - ticket.arrived_ms
    if waited >= WAIT_BOUND_MS:
        return float("inf")
    return RATING_WINDOW + RATING_WIDENING * waited / 1000


def distance(a: Waiting, b: Waiting) -> int:
    if a.rating is None and b.rating is None:
        return 0
    if a.rating is None or b.rating is None:
        return UNRATED_GAP
    return abs(a.rating - b.rating)


def plan(tickets: Sequence[Waiting], players: int, now_ms: int) -> list[Group]:
    """The groups to seat now: the oldest ticket first, with the others of the queue closest to its
    rating whose distance is within the wider of the two windows (ties: the earlier arrival)."""
    remaining = sorted(tickets, key=lambda t: (t.arrived_ms, t.id))
    groups: list[Group] = []
    while remaining:
        anchor, others = remaining[0], remaining[1:]
        close = sorted(
            (o for o in others if distance(anchor, o) <= max(window(anchor, now_ms), window(o, now_ms))),
            key=lambda o: (distance(anchor, o), o.arrived_ms, o.id),
        )
        full = _apart(anchor, close, players - 1)
        if len(full) == players - 1:
            chosen = (anchor, *full)
            groups.append(Group(chosen, bots=False))
        elif anchor.bots and now_ms - anchor.arrived_ms >= WAIT_BOUND_MS:
            chosen = (anchor, *_apart(anchor, [o for o in close if o.bots], players - 1))
            groups.append(Group(chosen, bots=True))
        else:
            chosen = (anchor,)  # no one for it yet: the others may still pair among themselves
        taken = {t.id for t in chosen}
        remaining = [t for t in remaining if t.id not in taken]
    return [g for g in groups]


def _apart(anchor: Waiting, candidates: Sequence[Waiting], wanted: int) -> list[Waiting]:
    """Up to ``wanted`` of ``candidates`` in their order, no two (nor one and the anchor) with a
    holder in common, and, once the group holds an account's ticket, no two from one network."""
    used = set(anchor.holders)
    rated = bool(anchor.holders)
    networks = {anchor.client} if anchor.client else set()
    shared = False  # two tickets of the group so far came from one network
    picked: list[Waiting] = []
    for candidate in candidates:
        if len(picked) == wanted:
            break
        if not used.isdisjoint(candidate.holders):
            continue
        same = bool(candidate.client) and candidate.client in networks
        if (rated or bool(candidate.holders)) and (shared or same):
            continue
        picked.append(candidate)
        used |= candidate.holders
        rated = rated or bool(candidate.holders)
        shared = shared or same
        if candidate.client:
            networks.add(candidate.client)
    return picked


# -- tickets: the API's side ---------------------------------------------------------------------


@dataclass(frozen=True)
class Opened:
    ticket: str
    secret: str
    fresh: bool  # False: the caller's live ticket, answered again


class QuickPlay:
    def __init__(self, store: EventStore, clock: Clock = wall_clock_ms) -> None:
        self.store = store
        self.clock = clock

    async def rating(self, game: str, account_id: str) -> int:
        raw = (await self.store.run(ratings_of(game, [account_id])))[0]
        skill = NEW_PLAYER if raw is None else msgspec.json.decode(raw, type=Skill)
        return display_rating(skill.mu, skill.sigma)

    async def open(
        self,
        game: str,
        players: int,
        name: str,
        bots: bool,
        account: Account | None,
        held: tuple[str, str] | None,
        client: str = "",
    ) -> Opened:
        """Queue a ticket, or answer the caller's live one (``held``: the ticket id and secret its
        browser remembers; an account's live ticket elsewhere is 409 ``already_queued``). ``client``:
        the network the request came from (``services.api.http.client_address``), kept only as a
        digest: a rated match never seats two tickets of one network (``plan``)."""
        check_queue(game, players)
        if held is not None:
            live = await self.read(*held, deliver=False)
            if live is not None and live["state"] in ("queued", "matched"):
                if live["game"] != game or int(live["players"]) != players:
                    raise _already_queued(held[0])
                return Opened(held[0], held[1], fresh=False)
        ticket_id, secret = secrets.token_hex(8), secrets.token_urlsafe(24)
        fields: dict[str, str | int] = {
            "digest": digest_of(secret),
            "game": game,
            "players": players,
            "name": name,
            "bots": "1" if bots else "0",
        }
        if client:
            fields["client"] = client_digest(client)
        owner = None
        if account is not None:
            owner = f"a:{account.id}"
            fields |= {
                "account_id": account.id,
                "account_name": account.name,
                "rating": await self.rating(game, account.id),
            }
        status, found = await self.store.run(
            store_ops.open_ticket(ticket_id, game, players, owner, self.clock(), fields)
        )
        if status == "live":
            raise _already_queued(found)
        log.info("quickplay_queued", ticket=ticket_id, game=game, players=players, rated=account is not None)
        return Opened(ticket_id, secret, fresh=True)

    async def read(self, ticket_id: str, secret: str, deliver: bool = True) -> dict[str, str] | None:
        return await self.store.run(
            store_ops.read_ticket(ticket_id, digest_of(secret), self.clock(), deliver)
        )

    async def state(self, ticket_id: str, secret: str, deliver: bool = True) -> dict[str, object]:
        """What the holder sees (404 ``ticket_not_found`` for another secret or a gone ticket); with
        ``deliver`` a seated ticket's seat token, the first time only."""
        found = await self.read(ticket_id, secret, deliver)
        if found is None:
            raise _not_found(ticket_id)
        return shown(found, self.clock())

    async def cancel(self, ticket_id: str, secret: str) -> None:
        outcome = await self.store.run(store_ops.cancel_ticket(ticket_id, digest_of(secret)))
        if outcome == "missing":
            raise _not_found(ticket_id)
        if outcome != "cancelled":
            raise ConflictError(
                "already_matched",
                "This ticket was already matched: the table is being set; it can no longer be cancelled.",
            )
        log.info("quickplay_cancelled", ticket=ticket_id)

    async def agree_to_bots(self, ticket_id: str, secret: str) -> dict[str, object]:
        state = await self.store.run(store_ops.agree_to_bots(ticket_id, digest_of(secret)))
        if not state:
            raise _not_found(ticket_id)
        return await self.state(ticket_id, secret, deliver=False)


def client_digest(client: str) -> str:
    """What a ticket keeps of its client's network: enough to tell two networks apart, not the address."""
    return hashlib.sha256(f"tablestream-quickplay-client:{client}".encode()).hexdigest()[:16]


def holders_of(ticket: dict[str, str]) -> frozenset[str]:
    """Who stands behind a stored ticket: its account, if it has one."""
    return frozenset({f"a:{ticket['account_id']}"}) if ticket.get("account_id") else frozenset()


def shown(found: dict[str, str], now_ms: int) -> dict[str, object]:
    """A ticket as its holder reads it (no digest, no other player's anything)."""
    state = found["state"]
    answer: dict[str, object] = {
        "ticket": found["id"],
        "state": state,
        "game": found["game"],
        "players": int(found["players"]),
        "bots_after_wait": found.get("bots") == "1",
        "waited_ms": max(0, now_ms - int(found["arrived"])),
        "wait_bound_seconds": WAIT_BOUND_MS // 1000,
        "max_wait_seconds": MAX_WAIT_MS // 1000,
    }
    if "position" in found:
        answer["position"] = int(found["position"])
    if state == "seated":
        answer |= {"game_id": found["game_id"], "seat": int(found["seat"])}
        if "token" in found:
            answer["token"] = found["token"]
    return answer


def _not_found(ticket_id: str) -> AppError:
    return NotFoundError("ticket_not_found", f"No quick play ticket {ticket_id!r} for this secret.")


def _already_queued(ticket_id: str) -> AppError:
    return ConflictError(
        "already_queued",
        "You are already queued for quick play; cancel that ticket before starting another.",
        ticket=ticket_id,
    )


# -- the matcher ---------------------------------------------------------------------------------


@dataclass
class Pass:
    """What one pass did."""

    seated: list[tuple[str, str]] = field(default_factory=list)  # (match id, game id)
    timed_out: list[str] = field(default_factory=list)
    abandoned: list[str] = field(default_factory=list)


Hook = Callable[[str], Awaitable[None]]
"""Called at each step of finishing a match (tests kill a matcher there)."""


async def _no_hook(step: str) -> None:
    return None


async def _no_guard() -> None:
    return None


class Matcher:
    """``guard``: awaited before each write of a match (the worker's loop renews its lease there and
    stops the pass if another matcher holds it); ``hook``: after each step (tests kill it there)."""

    def __init__(
        self,
        commands: GameCommands,
        clock: Clock = wall_clock_ms,
        hook: Hook = _no_hook,
        guard: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.commands = commands
        self.store = commands.store
        self.clock = clock
        self.hook = hook
        self.guard = guard or _no_guard

    async def run_pass(self) -> Pass:
        done = Pass()
        for match_id in await self.store.run(store_ops.pending_matches()):
            await self._finish_logged(match_id, done)
        for name in await self.store.run(store_ops.queue_names()):
            await self._queue_pass(name, done)
        return done

    async def _queue_pass(self, name: str, done: Pass) -> None:
        now = self.clock()
        game, players = name.rsplit(":", 1)[0], int(name.rsplit(":", 1)[1])
        live: list[dict[str, str]] = []
        for ticket in await self.store.run(store_ops.queued_tickets(name)):
            if ticket.get("state") != "queued":
                continue
            if now - int(ticket["seen"]) >= ABANDON_MS:
                if await self.store.run(store_ops.drop_ticket(ticket, "abandon", SEATED_TTL_S)):
                    done.abandoned.append(ticket["id"])
                    log.info("quickplay_abandoned", ticket=ticket["id"])
            elif now - int(ticket["arrived"]) >= MAX_WAIT_MS:
                if await self.store.run(store_ops.drop_ticket(ticket, "timeout", SEATED_TTL_S)):
                    done.timed_out.append(ticket["id"])
                    log.info("quickplay_timed_out", ticket=ticket["id"])
            else:
                live.append(ticket)
        waiting = [
            Waiting(
                t["id"],
                int(t["arrived"]),
                int(t["rating"]) if t.get("rating") else None,
                t.get("bots") == "1",
                holders_of(t),
                t.get("client", ""),
            )
            for t in live
        ]
        for group in plan(waiting, players, now):
            if len(group.tickets) < players and not group.bots:
                continue
            match_id = secrets.token_hex(8)
            fields: dict[str, str | int] = {
                "game": game,
                "players": players,
                "bots": "1" if group.bots else "0",
                "game_id": secrets.token_hex(8),
            }
            ids = [t.id for t in group.tickets]
            await self.guard()
            if await self.store.run(store_ops.claim(name, match_id, ids, now, fields)):
                log.info("quickplay_matched", match=match_id, tickets=len(ids), bots=group.bots)
                await self._finish_logged(match_id, done)

    async def _finish_logged(self, match_id: str, done: Pass) -> None:
        try:
            game_id = await self.finish(match_id)
        except AppError as refused:  # left pending: the next pass tries it again
            log.warning("quickplay_match_refused", match=match_id, code=refused.code)
            return
        if game_id is not None:
            done.seated.append((match_id, game_id))

    async def finish(self, match_id: str) -> str | None:
        """Create one claimed match's table with its players seated in the create write itself (see
        the module docstring): no one outside the match ever sees a free seat at it. Every step can
        run again after a crash and does what is left. Returns the table's id (``None``: no such
        match)."""
        match = await self.store.run(store_ops.match_of(match_id))
        if not match:
            return None
        tickets = await self.store.run(store_ops.tickets_of(match["tickets"].split(",")))
        game_id = match["game_id"]
        reserved: list[Reservation] = []
        for ticket in tickets:
            token = await self.store.run(
                store_ops.choose_token(match_id, ticket["id"], secrets.token_urlsafe(24))
            )
            account = await self._account(ticket)
            if account is not None:  # noted before the seat, as a join does: "Your tables"
                await self.store.run(your_tables.note_table(account.id, game_id, self.clock()))
            name = ticket["name"] if account is not None else await self._guest_name(ticket)
            reserved.append(Reservation(name, MARKER + ticket["id"], account, token))
        await self.hook("tokens")
        await self.guard()
        try:
            await self.commands.create(
                match["game"],
                int(match["players"]),
                {},
                game_id=game_id,
                seats=reserved,
                bots=match.get("bots") == "1",
            )
        except AppError as refused:  # nothing was written: its players go back to their queue
            await self.store.run(store_ops.give_back(match_id))
            log.warning("quickplay_match_given_back", match=match_id, code=refused.code)
            return None
        await self.hook("created")
        folded = await self.commands.load(game_id)
        seat_of = {player.client_seed: player.seat for player in folded.state.seated}
        seats = [
            (ticket, seat_of[chosen.client_seed], chosen.token)
            for ticket, chosen in zip(tickets, reserved, strict=True)
        ]
        await self.store.run(store_ops.seated(match_id, game_id, seats, SEATED_TTL_S))
        log.info("quickplay_seated", match=match_id, game_id=game_id, seats=len(seats))
        return game_id

    async def _guest_name(self, ticket: dict[str, str]) -> str:
        """An anonymous ticket's name, unless an account registered it (or one like it) since the
        ticket queued: then ``Guest`` and a few characters of the ticket, so that no one sits under
        a registered player's name (``services.accounts.seat_names``)."""
        name = ticket["name"]
        if await self.store.run(store_accounts.name_holder(checked_seat_name(name).skeleton)) is None:
            return name
        return f"Guest {ticket['id'][:4]}"

    async def _account(self, ticket: dict[str, str]) -> Account | None:
        """The ticket's account, if it still exists (retention may remove an idle unverified one:
        then the seat is an anonymous one under the same name)."""
        if not ticket.get("account_id"):
            return None
        if not await self.store.run(retention.account_seating(ticket["account_id"], self.clock())):
            return None
        return Account(id=ticket["account_id"], name=ticket["account_name"])
