"""Traces (``services.table.tracing``): one command is one trace, from the HTTP request through the append
and the hand-over to the worker's consumer batch and its view writes; off by default; the trace context
crosses Redis in the RQ job's meta. Spans are collected by OpenTelemetry's in-memory exporter."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the tracing extra is not installed")

from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from rq.job import Job
from rq.serializers import JSONSerializer

from bots import choose
from services.store.queue import TRACE_LINKS, enqueue_projections, projection_queue
from services.store.rq_workers import run_burst
from services.table import tracing
from tests.api.conftest import Api

COMMAND_ROUTE = "POST /games/{game_id}/commands"


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Tracing on, into an in-memory exporter, for the test; off again after it."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    try:
        yield exporter
    finally:
        tracing.use_provider(None)
        provider.shutdown()


def send_one_command(api: Api, game_id: str, seed: int = 0) -> dict[str, Any]:
    """A legal command of the first seat to act; returns the accepted answer."""
    seat = api.view(game_id)["to_act"][0]
    own = api.view(game_id, seat)
    response = api.send(
        game_id, seat, choose(own["game"], own, random.Random(seed)), expected_version=own["version"]
    )
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def ancestors(span: ReadableSpan, by_id: dict[int, ReadableSpan]) -> list[str]:
    """The names of the span's parents, nearest first, as far as they were collected."""
    names = []
    while span.parent is not None and span.parent.span_id in by_id:
        span = by_id[span.parent.span_id]
        names.append(span.name)
    return names


def test_one_command_is_one_trace_to_its_hand_over_and_the_consumer_batch_that_projects_it_links_to_it(
    fake_api: Api, spans: InMemorySpanExporter
) -> None:
    game_id = fake_api.started("skull", 3)
    fake_api.project()
    seat = fake_api.view(game_id)["to_act"][0]
    own = fake_api.view(game_id, seat)
    spans.clear()  # the views read are requests too, each a trace of its own
    response = fake_api.send(
        game_id, seat, choose("skull", own, random.Random(1)), expected_version=own["version"]
    )
    assert response.status_code == 200, response.text
    fake_api.project()  # the consumer's pass, in this process, through Redis like a real worker's

    finished = spans.get_finished_spans()
    by_id = {span.context.span_id: span for span in finished}
    named = {span.name: span for span in finished}
    assert {COMMAND_ROUTE, "store.append", "projection.handover", "projection.batch"} <= set(named)
    command = [span for span in finished if span.name not in ("projection.batch", "projection.write_views")]
    assert len({span.context.trace_id for span in command}) == 1, [s.name for s in finished]
    server = named[COMMAND_ROUTE]
    assert server.parent is None and server.kind == trace.SpanKind.SERVER
    assert server.attributes is not None and server.attributes["http.route"] == "/games/{game_id}/commands"
    assert server.attributes["http.response.status_code"] == 200
    append = named["store.append"]
    assert append.attributes is not None
    assert append.attributes[tracing.GAME_ID] == game_id
    assert append.attributes[tracing.VERSION] == response.json()["version"]
    assert ancestors(append, by_id) == [COMMAND_ROUTE]
    batch = named["projection.batch"]
    assert batch.kind == trace.SpanKind.CONSUMER and batch.parent is None  # a batch serves many commands
    assert [link.context.span_id for link in batch.links] == [named["projection.handover"].context.span_id]
    writes = [span for span in finished if span.name == "projection.write_views"]
    assert writes, "the batch wrote the game's views"
    for write in writes:
        assert ancestors(write, by_id)[0] == "projection.batch"
        assert write.attributes is not None and write.attributes[tracing.GAME_ID] == game_id
    assert max(w.attributes[tracing.VERSION] for w in writes if w.attributes) == response.json()["version"]


def test_a_consumer_batch_that_covers_several_commands_is_linked_to_each_of_their_hand_overs(
    fake_api: Api, spans: InMemorySpanExporter
) -> None:
    first, second = fake_api.started("skull", 3), fake_api.started("skull", 3)
    fake_api.project()
    views = {game_id: fake_api.view(game_id) for game_id in (first, second)}
    owns = {game_id: fake_api.view(game_id, views[game_id]["to_act"][0]) for game_id in (first, second)}
    spans.clear()
    for game_id in (first, second):  # two hand-overs, one batch
        seat = views[game_id]["to_act"][0]
        own = owns[game_id]
        sent = fake_api.send(
            game_id, seat, choose("skull", own, random.Random(2)), expected_version=own["version"]
        )
        assert sent.status_code == 200, sent.text
    handovers = [span for span in spans.get_finished_spans() if span.name == "projection.handover"]
    assert len(handovers) == 2
    fake_api.project()

    finished = spans.get_finished_spans()
    (batch,) = [span for span in finished if span.name == "projection.batch"]
    assert batch.parent is None
    assert [link.context.span_id for link in batch.links] == [h.context.span_id for h in handovers]
    assert [link.context.trace_id for link in batch.links] == [h.context.trace_id for h in handovers]
    assert batch.attributes is not None and batch.attributes["tablestream.batch.taken"] == 2
    written = {
        span.attributes[tracing.GAME_ID]
        for span in finished
        if span.name == "projection.write_views" and span.attributes
    }
    assert written == {first, second}
    assert not fake_api.sync.exists(TRACE_LINKS), "the batch took the links the hand-overs left"


def test_the_trace_context_survives_the_rq_job_metadata_in_redis(
    fake_api: Api, spans: InMemorySpanExporter
) -> None:
    queue = projection_queue(fake_api.sync)
    with tracing.span("handover-under-test") as span:
        assert span is not None
        enqueue_projections(queue, ["g1"], **tracing.carrier())
        sent = span.get_span_context()
    (job_id,) = queue.job_ids
    job = Job.fetch(job_id, connection=fake_api.sync, serializer=JSONSerializer)  # read back from Redis
    assert set(job.meta) >= {"traceparent"}
    received = trace.get_current_span(propagate.extract(job.meta)).get_span_context()
    assert (received.trace_id, received.span_id) == (sent.trace_id, sent.span_id)
    assert received.is_remote


def test_tracing_is_off_unless_the_environment_asks_for_it() -> None:
    assert tracing.wanted({}) is None
    assert tracing.wanted({"OTEL_SERVICE_NAME": "tablestream-api"}) is None
    assert tracing.wanted({"OTEL_TRACES_EXPORTER": "none"}) is None
    assert tracing.wanted({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}) is None
    assert tracing.wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}) == "otlp"
    assert tracing.wanted({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}) == "otlp"
    assert tracing.wanted({"OTEL_TRACES_EXPORTER": "console"}) == "console"
    assert tracing.configure_tracing({}) is False
    assert tracing.ON is False


def test_with_tracing_off_a_command_makes_no_span_context_and_leaves_nothing_in_redis(fake_api: Api) -> None:
    assert not tracing.ON
    exporter = InMemorySpanExporter()  # a provider nobody handed to the service
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    game_id = fake_api.started("skull", 3)
    fake_api.project()
    queue = projection_queue(fake_api.sync)
    seat = fake_api.view(game_id)["to_act"][0]
    own = fake_api.view(game_id, seat)
    sent = fake_api.send(
        game_id, seat, choose("skull", own, random.Random(3)), expected_version=own["version"]
    )
    assert sent.status_code == 200, sent.text
    assert queue.job_ids == []  # the hand-over queues no job
    assert not fake_api.sync.exists(TRACE_LINKS)
    fake_api.project()
    assert exporter.get_finished_spans() == ()
    assert tracing.carrier() == {} and tracing.ids() is None


def test_asked_for_without_the_extra_tracing_stays_off_and_the_service_still_answers(
    fake_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # as if the extra were absent
    assert tracing.configure_tracing({"OTEL_TRACES_EXPORTER": "otlp"}) is False
    assert not tracing.ON
    game_id = fake_api.started("skull", 3)
    answer = send_one_command(fake_api, game_id)
    assert answer["version"] > 0


def test_the_environment_switches_tracing_on_with_its_service_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SERVICE_NAME", "tablestream-api-under-test")
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    provider = None
    try:
        assert tracing.configure_tracing() is True
        assert tracing.ON
        provider = tracing._provider
        assert provider is not None
        assert provider.resource.attributes["service.name"] == "tablestream-api-under-test"
    finally:
        tracing.use_provider(None)
        if provider is not None:
            provider.shutdown()


def test_a_bots_move_in_the_worker_is_a_trace_of_its_own_down_to_its_hand_over(
    fake_api: Api, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fakeredis

    from services.store.queue import bot_queue, lifecycle_queue
    from workers import lifecycle

    server = fake_api.sync.connection_pool.connection_kwargs["server"]
    monkeypatch.setattr(lifecycle, "async_client_for", lambda sync: fakeredis.FakeAsyncRedis(server=server))
    game_id = fake_api.create("skull", 3)
    fake_api.join(game_id, "Ada")
    host = {"Authorization": f"Bearer {fake_api.hosts[game_id]}"}
    assert fake_api.client.post(f"/games/{game_id}/bots", json={}, headers=host).status_code == 200
    for _ in range(6):  # the human acts when it is her turn; the bots' jobs run in between
        view = fake_api.view(game_id)
        if 0 in view["to_act"]:
            own = fake_api.view(game_id, 0)
            fake_api.send(game_id, 0, choose("skull", own, random.Random(4)), expected_version=own["version"])
        run_burst(
            fake_api.sync, [lifecycle_queue(fake_api.sync), bot_queue(fake_api.sync)], logging_level="WARNING"
        )
        if any(span.name == "lifecycle.bot" for span in spans.get_finished_spans()):
            break
    fake_api.project()
    finished = spans.get_finished_spans()
    by_id = {span.context.span_id: span for span in finished}
    bots = {span.context.trace_id: span for span in finished if span.name == "lifecycle.bot"}
    assert bots, "a bot's job ran"
    for bot in bots.values():
        assert (
            bot.parent is None and bot.attributes is not None and bot.attributes[tracing.GAME_ID] == game_id
        )
    moved = [span for span in finished if span.name == "store.append" and span.context.trace_id in bots]
    assert moved, "a bot's job appended its move"
    for append in moved:
        assert ancestors(append, by_id) == ["lifecycle.bot"]
        assert append.attributes is not None and append.attributes[tracing.GAME_ID] == game_id
    handovers = [s for s in finished if s.name == "projection.handover" and s.context.trace_id in bots]
    assert {h.context.trace_id for h in handovers} == {a.context.trace_id for a in moved}
