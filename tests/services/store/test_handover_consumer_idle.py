"""How long ago a projection consumer last read the hand-over stream, as the API's ``/metrics`` reads
it (``indexes.handover_consumer_idle``: ``CLIENT LIST`` of the indexes' server, the ``idle`` of the
connections named ``HANDOVER_CONSUMER``), on a real server: a named connection that stops reading
shows a growing idle, a live consumer stays near 0, and none connected is the no-consumer value
(``+Inf`` in ``tablestream_handover_consumer_idle_seconds``)."""

from __future__ import annotations

import math
import time

import redis
from prometheus_client.parser import text_string_to_metric_families

from services.store.connection import named_client
from services.store.event_store import SyncEventStore
from services.store.indexes import HANDOVER_CONSUMER, consumer_idle
from services.telemetry import metrics
from tests.support.waiting import wait_until
from workers.handover import HandoverConsumer

IDLE = "tablestream_handover_consumer_idle_seconds"


def scraped_idle(idle: float | None) -> float:
    figures = metrics.Figures({}, {}, {}, 0.0, 0, {}, handover_consumer_idle_seconds=idle)
    (family,) = [f for f in metrics.scrape_time_families(figures) if f.name == IDLE]
    (sample,) = family.samples
    text = metrics.render(figures).decode()
    (parsed,) = [f for f in text_string_to_metric_families(text) if f.name == IDLE]
    assert parsed.samples[0].value == sample.value
    return float(sample.value)


def test_no_named_connection_is_no_consumer_and_scrapes_as_inf(real_redis: redis.Redis) -> None:
    store = SyncEventStore(real_redis)
    other = named_client(real_redis, "someone-else")
    other.ping()
    try:
        assert store.handover_consumer_idle() is None
        assert scraped_idle(None) == math.inf
    finally:
        other.connection_pool.disconnect()


def test_a_named_connection_that_stops_reading_shows_a_growing_idle_and_the_liveliest_counts(
    real_redis: redis.Redis,
) -> None:
    store = SyncEventStore(real_redis)
    frozen = named_client(real_redis, HANDOVER_CONSUMER)
    live = named_client(real_redis, HANDOVER_CONSUMER)
    try:
        frozen.xread({"ts:handover": "0-0"}, count=1, block=10)
        assert (store.handover_consumer_idle() or 0.0) <= 1
        # the server counts idle in whole seconds: it grows while the connection reads nothing
        stopped = wait_until(
            lambda: (idle := store.handover_consumer_idle()) is not None and idle >= 2 and idle,
            10,
            "idle 2 s",
        )
        assert scraped_idle(stopped) == stopped
        live.ping()  # another consumer reads: the smallest idle is the figure
        assert (store.handover_consumer_idle() or 0.0) <= 1
        live.connection_pool.disconnect()  # the server drops it as it reads the close: wait for that
        wait_until(lambda: (store.handover_consumer_idle() or 0.0) >= 2, 10, "the frozen one alone again")
        frozen.connection_pool.disconnect()  # killed: its connection is gone
        wait_until(lambda: store.handover_consumer_idle() is None, 10, "no consumer connection left")
    finally:
        frozen.connection_pool.disconnect()
        live.connection_pool.disconnect()


def test_a_running_consumer_reads_on_its_named_connection_and_leaves_none_once_stopped(
    real_redis: redis.Redis,
) -> None:
    store = SyncEventStore(real_redis)
    consumer = HandoverConsumer(SyncEventStore(real_redis), block_ms=100)
    consumer.start()
    try:
        wait_until(lambda: store.handover_consumer_idle() is not None, 10, "the consumer connected")
        for _ in range(3):  # a live consumer blocks 100 ms at a time: it reads again within a second
            time.sleep(0.6)
            assert (store.handover_consumer_idle() or 0.0) <= 1
    finally:
        consumer.stop(timeout=5)
    assert not consumer.is_alive()
    assert store.handover_consumer_idle() is None


def test_the_client_list_is_read_by_name_and_idle_only() -> None:
    listing = (
        "id=3 addr=127.0.0.1:5001 name=tablestream-handover idle=41 flags=N cmd=xread\n"
        "id=4 addr=127.0.0.1:5002 name= idle=0 flags=N cmd=evalsha\n"
        "id=5 addr=127.0.0.1:5003 name=tablestream-handover idle=7 flags=b cmd=xread\n"
        "id=6 addr=127.0.0.1:5004 name=tablestream-handover-other idle=0 flags=N cmd=ping\n"
    )
    assert consumer_idle(listing, HANDOVER_CONSUMER) == 7
    assert consumer_idle(listing, "nobody") is None
    assert consumer_idle("", HANDOVER_CONSUMER) is None
