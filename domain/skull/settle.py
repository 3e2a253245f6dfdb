"""From the end of the auction to the next round: the reveal, its outcome, losses, who starts next.

Each step adds events to the command's ``Unfolding``, which folds them as it goes, so the next step decides on
the state the previous events produced, exactly as a replay will see it.
"""

from __future__ import annotations

from domain.fairness import Chance
from domain.kernel import Unfolding
from domain.skull.commands import Disc
from domain.skull.events import (
    ChallengeFailed,
    ChallengeStarted,
    ChallengeSucceeded,
    DiscFlipped,
    DiscLost,
    DiscsShuffled,
    FirstPlayerChoiceRequested,
    LastChanceGiven,
    LastChanceReturned,
    Outcome,
    PlayerEliminated,
    RoundEnded,
    RoundStarted,
    SkullEvent,
)
from domain.skull.state import SkullState

DISCARD_LABEL = "discard"


Batch = Unfolding[SkullState, SkullEvent]
"""The events of one command so far and the state they lead to (``domain.kernel.Unfolding``)."""


def start_challenge(batch: Batch, chance: Chance) -> None:
    """The auction is over: the server turns the challenger's own stack for him, top to bottom.

    Turning stops at a skull, or at the bid unless ``reveal_all_own_first`` wants the whole stack;
    the challenger then flips opponents' discs himself, one command each.
    """
    state = batch.state
    challenger = state.bidder
    assert challenger is not None, "an auction always has a highest bidder"
    batch.add(ChallengeStarted(seat=challenger, bid=state.bid))
    reveal_all = state.options.reveal_all_own_first
    while batch.state.seats[challenger].face_down and (reveal_all or len(batch.state.flips) < state.bid):
        disc = batch.state.seats[challenger].next_face_down()
        batch.add(DiscFlipped(seat=challenger, disc=disc, automatic=True))
        if disc == "skull":
            fail(batch, challenger, chance)
            return
    if len(batch.state.flips) >= state.bid:
        succeed(batch)


def flip(batch: Batch, seat: int, chance: Chance) -> None:
    """The challenger turns the top face-down disc of ``seat``; a skull or the last flower ends it."""
    disc = batch.state.seats[seat].next_face_down()
    batch.add(DiscFlipped(seat=seat, disc=disc))
    if disc == "skull":
        fail(batch, seat, chance)
    elif len(batch.state.flips) >= batch.state.bid:
        succeed(batch)


def succeed(batch: Batch) -> None:
    challenger = _challenger(batch.state)
    batch.add(ChallengeSucceeded(seat=challenger, points=batch.state.seats[challenger].points + 1))
    end_round(batch, "success", eliminated_by=None)


def fail(batch: Batch, skull_owner: int, chance: Chance) -> None:
    """Stop at a skull. The holder of the Last chance disc is out at once; otherwise a disc is lost
    by the skull owner's blind draw (another's skull) or the challenger's choice (his own)."""
    state = batch.state
    challenger = _challenger(state)
    batch.add(ChallengeFailed(seat=challenger, skull_owner=skull_owner))
    if state.last_chance_holder == challenger:
        for disc in state.seats[challenger].owned:
            batch.add(DiscLost(seat=challenger, reason="last_chance", disc=disc))
        settle_loss(batch)
    elif skull_owner != challenger:
        discs = discard_canonical(state.seats[challenger].owned)
        order = tuple(chance.shuffle(state.round, DISCARD_LABEL, discs))
        batch.add(DiscsShuffled(seat=challenger, picker=skull_owner, count=len(order), order=order))


def discard_canonical(owned: tuple[Disc, ...]) -> list[Disc]:
    """The canonical order of the blind draw's shuffle: the challenger's discs, from hand and mat
    alike, flowers first, then skulls (``owned`` is already in that order)."""
    return list(owned)


def settle_loss(batch: Batch) -> None:
    """After the lost disc: elimination, then the end of the round."""
    state = batch.state
    challenger = _challenger(state)
    eliminated = not state.seats[challenger].owned
    if eliminated:
        batch.add(PlayerEliminated(seat=challenger))
    end_round(batch, "failure", eliminated_by=state.skull_owner if eliminated else None)


def end_round(batch: Batch, outcome: Outcome, eliminated_by: int | None) -> None:
    """Close the round, hand the Last chance disc back or out, and start the next round (or ask the
    eliminated challenger to name its first player)."""
    state = batch.state
    challenger = _challenger(state)
    points = tuple(seat.points for seat in state.seats)
    batch.add(
        RoundEnded(round=state.round, challenger=challenger, bid=state.bid, outcome=outcome, points=points)
    )
    if state.last_chance_holder is not None:
        batch.add(LastChanceReturned(seat=state.last_chance_holder))
    if batch.state.phase == "finished":
        return
    if _earns_last_chance(batch.state, challenger, outcome):
        batch.add(LastChanceGiven(seat=challenger))
    next_round = state.round + 1
    if eliminated_by is None:
        batch.add(RoundStarted(round=next_round, first_player=challenger, reason="challenger"))
    elif state.options.first_after_elimination == "left_neighbour":
        batch.add(
            RoundStarted(
                round=next_round, first_player=state.next_active(challenger), reason="left_neighbour"
            )
        )
    elif eliminated_by != challenger:
        batch.add(RoundStarted(round=next_round, first_player=eliminated_by, reason="skull_owner"))
    else:
        batch.add(FirstPlayerChoiceRequested(seat=challenger))


def _earns_last_chance(state: SkullState, challenger: int, outcome: Outcome) -> bool:
    """The challenger who just lost his second-to-last disc, once per game, when the table plays it."""
    return (
        state.options.last_chance
        and outcome == "failure"
        and len(state.seats[challenger].owned) == 1
        and challenger not in state.last_chance_given
    )


def _challenger(state: SkullState) -> int:
    assert state.challenger is not None, "only called during a challenge"
    return state.challenger
