"""The worked example of the PL rulebook (docs/rules.md "Worked examples"), played through the rules.

Andrzej (seat 0), Kasia (1), Ania (2) and Marek (3) each place one disc; Kasia, Ania and Marek add
another and Andrzej opens the auction. Bids 2, 3, 4, 5, then three passes: Marek must turn 5 of
the 7 discs. His own two flowers, Andrzej's flower, Ania's top flower, then Ania's second disc: a
skull. Ania draws one of Marek's discs blind.
"""

from __future__ import annotations

from domain.skull.events import (
    BidMade,
    ChallengeFailed,
    ChallengeStarted,
    DiscFlipped,
    DiscLost,
    DiscsShuffled,
    PlayerPassed,
    RoundEnded,
    RoundStarted,
)
from tests.domain.test_skull_support import F, S, do, place, skull_events, skull_game, st

ANDRZEJ, KASIA, ANIA, MAREK = range(4)


def test_the_pl_rulebook_example_marek_bids_five_of_seven_and_meets_anias_skull() -> None:
    g = skull_game(4, first_player=KASIA)
    place(g, [F, F, S, F])
    do(g, KASIA, "place_disc", disc=F)
    do(g, ANIA, "place_disc", disc=F)
    do(g, MAREK, "place_disc", disc=F)
    assert st(g).on_mats() == 7

    auction = [
        do(g, ANDRZEJ, "bid", count=2),
        do(g, KASIA, "bid", count=3),
        do(g, ANIA, "bid", count=4),
        do(g, MAREK, "bid", count=5),
        do(g, ANDRZEJ, "pass"),
        do(g, KASIA, "pass"),
    ]
    assert [skull_events(events) for events in auction] == [
        [BidMade(seat=ANDRZEJ, count=2)],
        [BidMade(seat=KASIA, count=3)],
        [BidMade(seat=ANIA, count=4)],
        [BidMade(seat=MAREK, count=5)],
        [PlayerPassed(seat=ANDRZEJ)],
        [PlayerPassed(seat=KASIA)],
    ]
    events = do(g, ANIA, "pass")
    assert skull_events(events) == [
        PlayerPassed(seat=ANIA),
        ChallengeStarted(seat=MAREK, bid=5),
        DiscFlipped(seat=MAREK, disc=F, automatic=True),
        DiscFlipped(seat=MAREK, disc=F, automatic=True),
    ]

    assert skull_events(do(g, MAREK, "flip", seat=ANDRZEJ)) == [DiscFlipped(seat=ANDRZEJ, disc=F)]
    assert skull_events(do(g, MAREK, "flip", seat=ANIA)) == [DiscFlipped(seat=ANIA, disc=F)]
    assert st(g).bid - len(st(g).flips) == 1  # one flower to go: Kasia's top or Ania's next
    events = do(g, MAREK, "flip", seat=ANIA)
    shuffled = skull_events(events)[2]
    assert skull_events(events)[:2] == [
        DiscFlipped(seat=ANIA, disc=S),
        ChallengeFailed(seat=MAREK, skull_owner=ANIA),
    ]
    assert isinstance(shuffled, DiscsShuffled) and (shuffled.picker, shuffled.count) == (ANIA, 4)

    events = do(g, ANIA, "discard_pick", position=1)
    assert skull_events(events) == [
        DiscLost(seat=MAREK, reason="drawn", position=1, disc=(shuffled.order or ())[1]),
        RoundEnded(round=1, challenger=MAREK, bid=5, outcome="failure", points=(0, 0, 0, 0)),
        RoundStarted(round=2, first_player=MAREK, reason="challenger"),
    ]
    assert len(st(g).seats[MAREK].owned) == 3
