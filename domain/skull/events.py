"""Skull events: every fact of a game, past tense, with stable snake_case tags.

Hidden facts are optional fields that ``redact`` blanks to ``None`` for seats that may not see
them: the kind of a placed disc (except the public "Last chance" disc), the shuffled order of the
challenger's discs, the kind of a lost disc.
"""

from __future__ import annotations

from typing import Literal

from domain.kernel import Event
from domain.skull.commands import Disc

Outcome = Literal["success", "failure"]
FirstPlayerReason = Literal["table", "draw", "challenger", "skull_owner", "named", "left_neighbour"]
LossReason = Literal["drawn", "chosen", "last_chance"]


class RoundStarted(Event, tag="round_started", frozen=True, kw_only=True):
    """Round ``round`` begins with everyone's discs in hand; ``reason`` says why this first player.

    Round 1's first player is the table's ``first_player`` option or ``uniform(1, "first-player", n)``.
    """

    round: int
    first_player: int
    reason: FirstPlayerReason


class DiscPlaced(Event, tag="disc_placed", frozen=True, kw_only=True):
    """A seat put a disc face down on its stack; ``disc`` is hidden from others unless it is the
    visibly distinct "Last chance" disc."""

    seat: int
    disc: Disc | None = None


class BidMade(Event, tag="bid_made", frozen=True, kw_only=True):
    """A seat opened or raised the auction to ``count``."""

    seat: int
    count: int


class PlayerPassed(Event, tag="player_passed", frozen=True, kw_only=True):
    """A seat left the auction for this round; its discs stay flippable."""

    seat: int


class ChallengeStarted(Event, tag="challenge_started", frozen=True, kw_only=True):
    """The auction is over: ``seat`` must turn ``bid`` flowers."""

    seat: int
    bid: int


class DiscFlipped(Event, tag="disc_flipped", frozen=True, kw_only=True):
    """The top-most face-down disc of ``seat``'s stack was turned, face up for everyone.

    ``automatic`` marks the challenger's own discs, which the server turns for him.
    """

    seat: int
    disc: Disc
    automatic: bool = False


class ChallengeSucceeded(Event, tag="challenge_succeeded", frozen=True, kw_only=True):
    """The challenger turned as many flowers as he bid; ``points`` is his new total."""

    seat: int
    points: int


class ChallengeFailed(Event, tag="challenge_failed", frozen=True, kw_only=True):
    """The challenger turned ``skull_owner``'s skull (possibly his own) and stopped."""

    seat: int
    skull_owner: int


class DiscsShuffled(Event, tag="discs_shuffled", frozen=True, kw_only=True):
    """The challenger's discs were shuffled face down for the skull owner's blind draw.

    ``order`` is ``shuffle(round, "discard", canonical)`` where canonical lists the challenger's
    discs (hand and mat together) flowers first, then skulls; it stays hidden from every seat while
    the game runs. ``count`` (public) is the number of positions ``picker`` chooses from.
    """

    seat: int
    picker: int
    count: int
    order: tuple[Disc, ...] | None = None


class DiscLost(Event, tag="disc_lost", frozen=True, kw_only=True):
    """``seat`` lost one disc for good; only ``seat`` sees which kind (``disc``).

    ``reason``: ``drawn`` by the skull owner at ``position``, ``chosen`` by the challenger himself,
    or ``last_chance`` (a holder of the Last chance disc who failed loses his last disc at once).
    """

    seat: int
    reason: LossReason
    position: int | None = None
    disc: Disc | None = None


class PlayerEliminated(Event, tag="player_eliminated", frozen=True, kw_only=True):
    """``seat`` has no disc left and is out of the game."""

    seat: int


class RoundEnded(Event, tag="round_ended", frozen=True, kw_only=True):
    """The round's outcome is settled; everyone takes back the discs on their mats.

    ``points`` are every seat's totals after the round (the scoreboard row).
    """

    round: int
    challenger: int
    bid: int
    outcome: Outcome
    points: tuple[int, ...]


class LastChanceReturned(Event, tag="last_chance_returned", frozen=True, kw_only=True):
    """The holder gave back the Last chance disc at the end of the round he held it."""

    seat: int


class LastChanceGiven(Event, tag="last_chance_given", frozen=True, kw_only=True):
    """``seat`` just lost his second-to-last disc and holds the Last chance disc next round."""

    seat: int


class FirstPlayerChoiceRequested(Event, tag="first_player_choice_requested", frozen=True, kw_only=True):
    """``seat``, eliminated by his own skull, must name the next round's first player."""

    seat: int


SkullEvent = (
    RoundStarted
    | DiscPlaced
    | BidMade
    | PlayerPassed
    | ChallengeStarted
    | DiscFlipped
    | ChallengeSucceeded
    | ChallengeFailed
    | DiscsShuffled
    | DiscLost
    | PlayerEliminated
    | RoundEnded
    | LastChanceReturned
    | LastChanceGiven
    | FirstPlayerChoiceRequested
)
