"""Bot levels at the table: the host's choice is recorded per seat, a takeover bot plays the
table's setting, and tables from before levels replay exactly as they were recorded."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from domain.games import table_for
from domain.kernel import Rejected
from domain.table import BotSeated, TableTimersSet, table_timers
from projections.narration import narrate
from projections.views import seat_view
from services.history.export import build_export
from services.history.records import CommandRecord
from services.history.verify import verify_export
from tests.support.online import TIMERS, leave, play_online
from tests.support.play import seeds_from
from tests.support.recorded import RecordedGame

NAMES = ["Ada", "Bot 2", "Bot 3", "Bot 4"]


def waiting(game: str, players: int, timers: dict[str, Any] | None = None) -> RecordedGame:
    table = table_for(game)
    seeds = seeds_from(5)
    resolved = table_timers({**TIMERS, **(timers or {})}, practice=True)
    created = table.create("levels", players, {}, seeds.chain_commitment(0), True, resolved)
    state = table.fold(None, created)
    assert state is not None
    return RecordedGame(table=table, seeds=seeds, state=state, events=list(created))


def test_the_host_seats_bots_of_the_chosen_level_and_the_stream_records_it() -> None:
    g = waiting("skull", 4)
    g.apply(g.table.join(g.state, "Ada", "", g.seeds))
    events = g.table.fill_with_bots(g.state, g.seeds, "strong")
    seated = [e for e in events if isinstance(e, BotSeated)]
    assert [e.level for e in seated] == ["strong"] * 3
    assert all(b'"level":"strong"' in msgspec.json.encode(e) for e in seated)
    g.apply(events)
    assert [g.state.bot_level(seat) for seat in (1, 2, 3)] == ["strong"] * 3
    view = seat_view(g.state, 10, 0)
    assert [p.get("bot_level") for p in view["players"]] == [None, "strong", "strong", "strong"]
    sentence = narrate("skull", msgspec.to_builtins(seated[0]), NAMES)
    assert "strong" in sentence


def test_a_normal_bot_is_recorded_as_before_levels_existed() -> None:
    g = waiting("six-nimmt", 2)
    g.apply(g.table.join(g.state, "Ada", "", g.seeds))
    seated = [e for e in g.table.fill_with_bots(g.state, g.seeds) if isinstance(e, BotSeated)]
    assert msgspec.json.encode(seated[0]) == b'{"type":"bot_seated","seat":1,"name":"Bot 2"}'
    old = msgspec.json.decode(b'{"type":"bot_seated","seat":1,"name":"Bot 2"}', type=BotSeated)
    assert old.level == "normal"


def test_a_normal_level_asked_for_in_a_decoded_request_is_recorded_without_a_level_too() -> None:
    g = waiting("six-nimmt", 2)
    g.apply(g.table.join(g.state, "Ada", "", g.seeds))
    asked = msgspec.json.decode(b'{"level":"normal"}')["level"]  # equal to "normal", not the same object
    seated = [e for e in g.table.fill_with_bots(g.state, g.seeds, asked) if isinstance(e, BotSeated)]
    assert msgspec.json.encode(seated[0]) == b'{"type":"bot_seated","seat":1,"name":"Bot 2"}'


def test_an_unknown_bot_level_is_refused_with_its_own_code() -> None:
    g = waiting("skull-king", 3)
    with pytest.raises(Rejected) as refused:
        g.table.fill_with_bots(g.state, g.seeds, "genius")
    assert refused.value.code == "invalid_bot_level"


def test_a_takeover_bot_plays_the_tables_bot_level_and_a_default_table_records_none() -> None:
    assert "bot_level" not in table_timers(dict(TIMERS), practice=True)
    assert table_timers({**TIMERS, "bot_level": "easy"}, practice=True)["bot_level"] == "easy"
    with pytest.raises(Rejected) as refused:
        table_timers({**TIMERS, "bot_level": "genius"}, practice=True)
    assert refused.value.code == "invalid_options"
    g = waiting("skull", 3, {"bot_level": "easy"})
    assert [e.bot_level for e in g.events if isinstance(e, TableTimersSet)] == ["easy"]
    for name in ("Ada", "Bart", "Cleo"):
        g.apply(g.table.join(g.state, name, "", g.seeds))
    assert g.state.status == "playing"
    leave(g, 1)
    assert 1 in g.state.bots and g.state.bot_level(1) == "easy"
    assert seat_view(g.state, 20, 0)["players"][1]["bot_level"] == "easy"


def test_the_verifier_reruns_the_hosts_bot_level_from_the_command_record() -> None:
    def recorded(bots_body: dict[str, Any]) -> RecordedGame:
        table, seeds = table_for("skull"), seeds_from(4)
        created = table.create("verify-levels", 3, {}, seeds.chain_commitment(0), False, dict(TIMERS))
        state = table.fold(None, created)
        assert state is not None
        g = RecordedGame(table=table, seeds=seeds, state=state)
        body = {"game": "skull", "players": 3, "options": {}, "table": dict(TIMERS)}
        g.record(CommandRecord(id="create", kind="create", body=body), created)
        joined = table.join(g.state, "Ada", "cs", seeds)
        g.record(CommandRecord(id="join", kind="join", body={"name": "Ada", "client_seed": "cs"}), joined)
        bots = table.fill_with_bots(g.state, seeds, "strong")
        g.record(CommandRecord(id="bots", kind="bots", body=bots_body), bots)
        return play_online(g, random.Random(4), timeout_share=0.0, leave_share=0.0)

    honest = recorded({"level": "strong"})
    assert honest.state.bot_level(2) == "strong"
    report = verify_export(build_export(honest.entries))
    assert report.ok, report.render()
    # a record whose body does not say strong re-runs to normal bots: not the stored events
    assert not verify_export(build_export(recorded({}).entries)).ok


def test_the_host_gives_each_seat_its_own_level_by_seating_bots_a_count_at_a_time() -> None:
    g = waiting("skull-king", 4)
    g.apply(g.table.join(g.state, "Ada", "", g.seeds))
    g.apply(g.table.fill_with_bots(g.state, g.seeds, "strong", 1))
    assert g.state.status == "waiting" and g.state.free_seats() == [2, 3]
    g.apply(g.table.fill_with_bots(g.state, g.seeds, "easy", 1))
    g.apply(g.table.fill_with_bots(g.state, g.seeds, "normal"))
    assert g.state.status == "playing"
    assert [g.state.bot_level(seat) for seat in (1, 2, 3)] == ["strong", "easy", "normal"]


@pytest.mark.parametrize("count", [0, -1, 3])
def test_a_count_of_bots_beyond_the_free_seats_is_refused_and_seats_nobody(count: int) -> None:
    g = waiting("six-nimmt", 3)
    g.apply(g.table.join(g.state, "Ada", "", g.seeds))
    with pytest.raises(Rejected) as refused:
        g.table.fill_with_bots(g.state, g.seeds, "strong", count)
    assert refused.value.code == "invalid_bot_count"
    assert "from 1 to 2 seats" in refused.value.message
    assert g.state.free_seats() == [1, 2]
