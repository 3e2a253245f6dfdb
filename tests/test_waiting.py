"""The tests' one way to wait (tests/support/waiting.py): a condition polled, ever less often as the
wait goes on, until it holds or a deadline stretched by the machine's load has passed."""

from __future__ import annotations

import itertools

import pytest

from tests.support import waiting
from tests.support.waiting import MAX_POLL, POLL, pauses, wait_until


def test_the_polls_begin_close_together_and_slow_down_to_a_fifth_of_a_second() -> None:
    first = list(itertools.islice(pauses(), 12))
    assert first[0] == POLL and first == sorted(first)
    assert first[1] == pytest.approx(POLL * 1.5) and first[-1] == MAX_POLL
    assert sum(first[:7]) < 1.0  # within the first second a wait still looks often
    assert list(itertools.islice(pauses(0.5), 3)) == [0.5, 0.5, 0.5]  # a slower pace asked for is kept


def test_a_wait_returns_what_the_condition_returned_once_it_holds() -> None:
    answers = iter([None, 0, "", "ready"])
    assert wait_until(lambda: next(answers), 5, "the fourth answer", interval=0.001) == "ready"


def test_a_wait_that_never_holds_names_what_it_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waiting, "load_factor", lambda: 1.0)
    with pytest.raises(TimeoutError, match="waiting for the impossible:\nit never came"):
        wait_until(lambda: False, 0.05, "the impossible", lambda: "it never came", interval=0.001)
