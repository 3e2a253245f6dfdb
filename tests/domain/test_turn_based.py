"""The turn-based table option (``turn_based``) in the domain: its bounds, its default wait for
players, and a real-time table's event recorded with exactly the bytes of before."""

from __future__ import annotations

import pytest

from domain.kernel import Rejected
from domain.table import (
    MAX_TURN_BASED_SECONDS,
    MAX_TURN_SECONDS,
    TURN_BASED_EXPIRE_MINUTES,
    TableTimersSet,
    table_timers,
)
from services.history.records import encode_event


def test_a_turn_based_table_takes_turns_up_to_a_week_and_waits_a_day_by_default() -> None:
    timers = table_timers({"turn_based": True, "turn_seconds": MAX_TURN_BASED_SECONDS}, practice=False)
    assert timers["turn_based"] is True and timers["turn_seconds"] == 7 * 86_400
    assert timers["expire_minutes"] == TURN_BASED_EXPIRE_MINUTES == 24 * 60
    assert table_timers({"turn_based": True}, practice=False)["turn_seconds"] == 60  # the public default


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"turn_seconds": MAX_TURN_SECONDS + 1}, "turn_too_long"),
        ({"turn_seconds": MAX_TURN_BASED_SECONDS}, "turn_too_long"),
        ({"turn_based": False, "turn_seconds": MAX_TURN_BASED_SECONDS}, "turn_too_long"),
        ({"turn_based": True, "turn_seconds": MAX_TURN_BASED_SECONDS + 1}, "invalid_options"),
        ({"turn_based": True, "expire_minutes": 24 * 60 + 1}, "invalid_options"),
        ({"turn_based": 1}, "invalid_options"),
    ],
)
def test_turns_past_a_day_need_a_turn_based_table_and_none_lasts_past_a_week(
    options: dict[str, object], code: str
) -> None:
    with pytest.raises(Rejected) as refused:
        table_timers(options, practice=False)
    assert refused.value.code == code


def test_a_real_time_table_keeps_a_day_per_turn_and_records_the_bytes_of_before() -> None:
    timers = table_timers({"turn_seconds": MAX_TURN_SECONDS}, practice=False)
    assert "turn_based" not in timers and timers["turn_seconds"] == 86_400
    before = b'{"type":"table_timers_set","turn_seconds":60,"expire_minutes":30,"takeover_after":3}'
    assert encode_event(TableTimersSet(turn_seconds=60, expire_minutes=30, takeover_after=3)) == before
    marked = encode_event(
        TableTimersSet(turn_seconds=60, expire_minutes=30, takeover_after=3, turn_based=True)
    )
    assert marked == before[:-1] + b',"turn_based":true}'
