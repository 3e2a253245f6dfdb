"""The dispute aggregate: who opens, who adds evidence, who resolves, and when."""

from __future__ import annotations

import pytest

from domain.disputes import (
    MAX_TEXT,
    DisputeOpened,
    DisputeResolved,
    EvidenceAdded,
    Party,
    add_evidence,
    fold,
    open_dispute,
    resolve,
)
from domain.kernel import Conflict, Rejected

SEAT_1 = Party(role="seat", seat=1)
SEAT_2 = Party(role="seat", seat=2)
ADMIN = Party(role="operator", operator="admin", name="admin")


def opened(by: Party = SEAT_1, round_number: int | None = 2):
    events = open_dispute("d1", "g1", round_number, "  The deal of round 2 looks wrong.  ", by, 1000, 3, 4)
    return events, fold(events)


def test_a_seated_player_opens_a_dispute_on_a_played_round_with_the_text_trimmed() -> None:
    events, state = opened()
    assert events == [
        DisputeOpened(
            dispute_id="d1",
            game_id="g1",
            round=2,
            text="The deal of round 2 looks wrong.",
            seat=1,
            by=SEAT_1,
            at=1000,
        )
    ]
    assert state is not None and state.open and state.round == 2 and state.opened_by == SEAT_1


def test_a_dispute_may_name_the_whole_game_instead_of_a_round() -> None:
    _, state = opened(round_number=None)
    assert state is not None and state.round is None


def test_a_round_not_yet_played_cannot_be_disputed() -> None:
    with pytest.raises(Rejected) as refused:
        open_dispute("d1", "g1", 4, "too early", SEAT_1, 1, 3, 4)
    assert refused.value.code == "invalid_round"
    with pytest.raises(Rejected):
        open_dispute("d1", "g1", 0, "round zero", SEAT_1, 1, 3, 4)


def test_an_empty_or_overlong_text_is_refused() -> None:
    for text in ("   ", "x" * (MAX_TEXT + 1)):
        with pytest.raises(Rejected) as refused:
            open_dispute("d1", "g1", 1, text, SEAT_1, 1, 3, 4)
        assert refused.value.code == "invalid_dispute_text"


def test_an_operator_may_name_the_disputed_seat_but_a_player_only_their_own() -> None:
    state = fold(open_dispute("d1", "g1", 1, "text", ADMIN, 1, 3, 4, seat=3))
    assert state is not None and state.seat == 3
    with pytest.raises(Rejected) as refused:
        open_dispute("d1", "g1", 1, "text", SEAT_1, 1, 3, 4, seat=2)
    assert refused.value.code == "invalid_party"


def test_a_seat_outside_the_table_cannot_open() -> None:
    with pytest.raises(Rejected) as refused:
        open_dispute("d1", "g1", 1, "text", Party(role="seat", seat=4), 1, 3, 4)
    assert refused.value.code == "invalid_party"


def test_the_disputant_and_an_operator_add_evidence_while_it_is_open() -> None:
    events, state = opened()
    assert state is not None
    added = add_evidence(state, "receipts", '{"receipts": []}', SEAT_1, 2000)
    assert added == [EvidenceAdded(kind="receipts", content='{"receipts": []}', by=SEAT_1, at=2000)]
    state = fold([*events, *added, *add_evidence(state, "note", "Checked the log.", ADMIN, 3000)])
    assert state is not None and state.evidence == 2


def test_another_seat_cannot_add_evidence_to_someone_elses_dispute() -> None:
    _, state = opened()
    assert state is not None
    with pytest.raises(Rejected) as refused:
        add_evidence(state, "note", "me too", SEAT_2, 2000)
    assert refused.value.code == "not_disputant"


def test_unknown_evidence_kinds_are_refused() -> None:
    _, state = opened()
    assert state is not None
    with pytest.raises(Rejected) as refused:
        add_evidence(state, "video", "x", SEAT_1, 2000)
    assert refused.value.code == "invalid_evidence"


def test_only_an_operator_resolves_and_only_once() -> None:
    events, state = opened()
    assert state is not None
    with pytest.raises(Rejected) as refused:
        resolve(state, "upheld", "I say so", SEAT_1, 2000)
    assert refused.value.code == "not_an_operator"
    resolved = resolve(state, "rejected", "The bundle verifies: every check passed.", ADMIN, 3000)
    assert resolved == [
        DisputeResolved(
            verdict="rejected", reason="The bundle verifies: every check passed.", by=ADMIN, at=3000
        )
    ]
    state = fold([*events, *resolved])
    assert state is not None and not state.open and state.verdict == "rejected"
    with pytest.raises(Conflict) as again:
        resolve(state, "upheld", "changed my mind", ADMIN, 4000)
    assert again.value.code == "dispute_resolved"


def test_no_evidence_is_taken_once_resolved() -> None:
    events, state = opened()
    assert state is not None
    state = fold([*events, *resolve(state, "upheld", "The log has another head.", ADMIN, 3000)])
    assert state is not None
    with pytest.raises(Conflict) as refused:
        add_evidence(state, "note", "late", SEAT_1, 4000)
    assert refused.value.code == "dispute_resolved"


def test_a_verdict_is_upheld_or_rejected() -> None:
    _, state = opened()
    assert state is not None
    with pytest.raises(Rejected) as refused:
        resolve(state, "maybe", "unsure", ADMIN, 3000)
    assert refused.value.code == "invalid_verdict"
