"""One small function per Skull command: check phase, turn and content, in that order, then decide.

Each raises ``Rejected(code, sentence)``; a sentence only ever mentions what the acting seat may
know (its own discs, public counts), never another seat's hidden discs.
"""

from __future__ import annotations

from typing import TypeGuard

from domain.fairness import Chance
from domain.kernel import Deciders, Rejected, Seat, Unfolding
from domain.skull.commands import Bid, ChooseFirstPlayer, DiscardOwn, DiscardPick, Flip, Pass, PlaceDisc
from domain.skull.events import BidMade, DiscLost, DiscPlaced, PlayerPassed, RoundStarted, SkullEvent
from domain.skull.evolve import EVOLVERS
from domain.skull.settle import flip, settle_loss, start_challenge
from domain.skull.state import Phase, SkullState

FIRST_PLAYER_LABEL = "first-player"

_PHASE_WORDS: dict[Phase, str] = {
    "waiting": "the table is still filling",
    "placement": "everyone is placing an opening disc",
    "turns": "players are placing discs or opening the auction",
    "auction": "the auction is running",
    "reveal": "the challenger is turning discs",
    "discard_pick": "the skull's owner is drawing the challenger's lost disc",
    "discard_own": "the challenger is choosing which disc he loses",
    "choose_first_player": "the eliminated challenger is naming the next first player",
    "between_rounds": "the round is ending",
    "finished": "the game is over",
}


def start(state: SkullState, chance: Chance) -> list[SkullEvent]:
    """Round 1 begins; its first player is the table's choice or ``uniform(1, "first-player", n)``."""
    named = state.options.first_player
    if named is not None:
        return [RoundStarted(round=1, first_player=named, reason="table")]
    drawn = chance.uniform(1, FIRST_PLAYER_LABEL, state.players)
    return [RoundStarted(round=1, first_player=drawn, reason="draw")]


def _expect_phase(state: SkullState, *phases: Phase, doing: str) -> None:
    if state.phase not in phases:
        raise Rejected("wrong_phase", f"You cannot {doing} now: {_PHASE_WORDS[state.phase]}.")


def _expect_turn(state: SkullState, seat: Seat, awaited: int | None) -> None:
    if seat != awaited:
        raise Rejected("not_your_turn", "It is not your turn.")


def _place_disc(state: SkullState, cmd: PlaceDisc, seat: Seat, chance: Chance) -> list[SkullEvent]:
    _expect_phase(state, "placement", "turns", doing="place a disc")
    mine = state.seats[seat]
    if state.phase == "placement" and mine.stack:
        raise Rejected("already_placed", "You have already placed your opening disc; wait for the others.")
    if state.phase == "turns":
        _expect_turn(state, seat, state.turn)
        if not mine.hand:
            raise Rejected("must_bid", "Your hand is empty, so you must open the auction with a bid.")
    if cmd.disc not in mine.hand:
        raise Rejected("no_such_disc", f"You have no {_disc_name(cmd.disc)} in your hand.")
    return [DiscPlaced(seat=seat, disc=cmd.disc)]


def _bid(state: SkullState, cmd: Bid, seat: Seat, chance: Chance) -> list[SkullEvent]:
    _expect_phase(state, "turns", "auction", doing="bid")
    _expect_turn(state, seat, state.turn)
    ceiling = state.on_mats()
    if not _is_int(cmd.count) or not state.bid < cmd.count <= ceiling:
        raise Rejected(
            "illegal_bid", f"Your bid must be from {state.bid + 1} to {ceiling}, the discs on the mats."
        )
    batch = Unfolding(EVOLVERS, state).add(BidMade(seat=seat, count=cmd.count))
    if cmd.count == ceiling:
        start_challenge(batch, chance)
    return batch.events


def _pass(state: SkullState, cmd: Pass, seat: Seat, chance: Chance) -> list[SkullEvent]:
    _expect_phase(state, "auction", doing="pass")
    _expect_turn(state, seat, state.turn)
    batch = Unfolding(EVOLVERS, state).add(PlayerPassed(seat=seat))
    if len(batch.state.in_auction()) == 1:
        start_challenge(batch, chance)
    return batch.events


def _flip(state: SkullState, cmd: Flip, seat: Seat, chance: Chance) -> list[SkullEvent]:
    _expect_phase(state, "reveal", doing="flip a disc")
    _expect_turn(state, seat, state.challenger)
    target = _seat_number(cmd.seat, state)
    if target is None:
        raise Rejected("no_such_seat", f"There is no seat {cmd.seat!r} at this table.")
    if target == seat:
        own_left = state.seats[seat].face_down
        code = "must_flip_own_first" if own_left else "cannot_flip_own"
        raise Rejected(code, "Your own stack is turned for you; flip an opponent's disc.")
    if not state.seats[target].face_down:
        raise Rejected("stack_exhausted", f"Seat {target} has no face-down disc left.")
    batch = Unfolding(EVOLVERS, state)
    flip(batch, target, chance)
    return batch.events


def _discard_pick(state: SkullState, cmd: DiscardPick, seat: Seat, chance: Chance) -> list[SkullEvent]:
    _expect_phase(state, "discard_pick", doing="draw a disc")
    _expect_turn(state, seat, state.skull_owner)
    order = state.discard_order
    assert order is not None and state.challenger is not None, "a blind draw follows a shuffle"
    position = cmd.position
    if not _is_int(position) or not 0 <= position < len(order):
        raise Rejected("illegal_position", f"Choose a position from 0 to {len(order) - 1}.")
    lost = DiscLost(seat=state.challenger, reason="drawn", position=position, disc=order[position])
    batch = Unfolding(EVOLVERS, state).add(lost)
    settle_loss(batch)
    return batch.events


def _discard_own(state: SkullState, cmd: DiscardOwn, seat: Seat, chance: Chance) -> list[SkullEvent]:
    _expect_phase(state, "discard_own", doing="discard one of your discs")
    _expect_turn(state, seat, state.challenger)
    if cmd.disc not in state.seats[seat].owned:
        raise Rejected("no_such_disc", f"You have no {_disc_name(cmd.disc)} to lose.")
    batch = Unfolding(EVOLVERS, state).add(DiscLost(seat=seat, reason="chosen", disc=cmd.disc))
    settle_loss(batch)
    return batch.events


def _choose_first_player(
    state: SkullState, cmd: ChooseFirstPlayer, seat: Seat, chance: Chance
) -> list[SkullEvent]:
    _expect_phase(state, "choose_first_player", doing="name the first player")
    if seat != state.chooser:
        raise Rejected(
            "not_eliminated_chooser",
            "Only the challenger eliminated by his own skull names the first player.",
        )
    target = _seat_number(cmd.seat, state)
    if target is None or state.seats[target].eliminated:
        raise Rejected("not_in_game", "Name a seat that is still in the game.")
    return [RoundStarted(round=state.round + 1, first_player=target, reason="named")]


def _seat_number(value: object, state: SkullState) -> int | None:
    if _is_int(value) and 0 <= value < state.players:
        return value
    return None


def _disc_name(disc: object) -> str:
    names = {"flower": "flower", "skull": "skull", "last_chance": "Last chance disc"}
    return names.get(disc, "such disc") if isinstance(disc, str) else "such disc"


def _is_int(value: object) -> TypeGuard[int]:
    """A real integer: commands built in Python skip msgspec's checks, and ``True`` is not a seat."""
    return isinstance(value, int) and not isinstance(value, bool)


def _admit(state: SkullState, seat: Seat) -> None:
    """Whatever the command: a seated player, still in the game (or naming the next first player)."""
    if not 0 <= seat < state.players:
        raise Rejected("not_seated", "Only a seated player may act.")
    if state.seats[seat].eliminated and seat != state.chooser:
        raise Rejected("eliminated", "You are out of the game and can no longer act.")


DECIDERS: Deciders[SkullState, SkullEvent] = Deciders(
    "Skull",
    {
        PlaceDisc: _place_disc,
        Bid: _bid,
        Pass: _pass,
        Flip: _flip,
        DiscardPick: _discard_pick,
        DiscardOwn: _discard_own,
        ChooseFirstPlayer: _choose_first_player,
    },
    admit=_admit,
)
