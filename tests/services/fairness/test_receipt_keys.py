"""The signing keys in Redis (services.fairness.receipts, services.store.signing_keys) and
``tablestream keys``."""

from __future__ import annotations

import fakeredis
import pytest
import redis

from services.cli import main
from services.fairness import receipts
from services.fairness.receipts import ReceiptSigner
from services.fairness.signing import KeyRing, ReceiptCheck, sign_receipt, verify_receipt
from services.operating.config import Settings
from services.store import signing_keys
from services.store.embedded import EmbeddedRedis
from services.store.event_store import EventStore, SyncEventStore

T0 = 1_800_000_000
RECEIPT = {"game_id": "g-1", "version": 3, "hash": "0f" * 32}


def test_the_first_start_creates_one_ring_and_later_starts_read_the_same(real_redis: redis.Redis) -> None:
    store = SyncEventStore(real_redis)
    assert store.run(receipts.load_keys()) is None
    first = store.run(receipts.ensure_keys(T0, "tables.example"))
    again = store.run(receipts.ensure_keys(T0 + 10, "other.example"))
    assert again.public_keys() == first.public_keys()
    assert first.current.public.name == "tables.example"


def test_a_start_racing_another_keeps_the_ring_the_other_stored(real_redis: redis.Redis) -> None:
    theirs = KeyRing.generate(T0)
    operation = receipts.ensure_keys(T0)
    get = next(operation)
    set_nx = operation.send(real_redis.execute_command(*get.args))  # type: ignore[union-attr]
    assert set_nx.args[0] == "SET" and "NX" in set_nx.args  # type: ignore[union-attr]
    real_redis.set(signing_keys.SIGNING_KEYS, theirs.to_secret())  # the other start's SET NX lands first
    get_again = operation.send(real_redis.execute_command(*set_nx.args))  # type: ignore[union-attr]
    with pytest.raises(StopIteration) as done:
        operation.send(real_redis.execute_command(*get_again.args))  # type: ignore[union-attr]
    assert done.value.value.public_keys() == theirs.public_keys()


def test_rotation_keeps_every_old_key_so_old_receipts_still_verify(real_redis: redis.Redis) -> None:
    store = SyncEventStore(real_redis)
    ring = store.run(receipts.ensure_keys(T0))
    old_receipt = sign_receipt(RECEIPT, ring.current, T0 + 5)
    store.run(receipts.rotate_keys(T0 + 100, overlap=300))
    rotated = store.run(receipts.rotate_keys(T0 + 500, overlap=300))
    assert len(rotated.keys) == 3
    assert [k.public.not_after for k in rotated.keys] == [T0 + 400, T0 + 800, None]
    stored = store.run(receipts.load_keys())
    assert stored is not None and stored.public_keys() == rotated.public_keys()
    assert verify_receipt(old_receipt, stored.public_keys()) is ReceiptCheck.OK
    late = sign_receipt(RECEIPT, stored.keys[0], T0 + 401)
    assert verify_receipt(late, stored.public_keys()) is ReceiptCheck.KEY_NOT_VALID


def test_a_rotation_that_lost_a_race_writes_nothing(real_redis: redis.Redis) -> None:
    store = SyncEventStore(real_redis)
    store.run(receipts.ensure_keys(T0))
    operation = receipts.rotate_keys(T0 + 100)
    get = next(operation)
    read = real_redis.execute_command(*get.args)  # type: ignore[union-attr]
    store.run(receipts.rotate_keys(T0 + 50))  # another rotation lands in between
    winner = real_redis.get(signing_keys.SIGNING_KEYS)
    swap = operation.send(read)
    assert swap.script == "swap_keys"  # type: ignore[union-attr]
    replied = store.run(iter_one(swap))
    with pytest.raises(receipts.RotationRaced):
        operation.send(replied)
    assert real_redis.get(signing_keys.SIGNING_KEYS) == winner


def iter_one(request):  # type: ignore[no-untyped-def]
    reply = yield request
    return reply


def test_keys_list_and_rotate_print_each_key_and_its_period(
    redis_server: EmbeddedRedis, real_redis: redis.Redis, capsys: pytest.CaptureFixture[str]
) -> None:
    url = ["--redis-url", redis_server.url, "--redis-cluster", "no"]
    assert main(["keys", "list", *url]) == 0
    assert "no signing keys yet" in capsys.readouterr().out
    SyncEventStore(real_redis).run(receipts.ensure_keys(T0, "tables.example"))
    assert main(["keys", "rotate", *url, "--overlap", "60"]) == 0
    out = capsys.readouterr().out
    ring = KeyRing.from_secret(real_redis.get(signing_keys.SIGNING_KEYS))  # type: ignore[arg-type]
    old, new = ring.keys
    assert f"new signing key {new.key_id}; {old.key_id} signs until" in out
    assert f"* {new.key_id}" in out and f"  {old.key_id}  2027-01-15T08:00:00Z .. " in out
    assert "tables.example+" in out and "PRIVATE" not in out
    assert main(["keys", "list", *url]) == 0
    assert capsys.readouterr().out.count("tables.example+") == 2


@pytest.mark.anyio
@pytest.mark.parametrize("overlap", [0, 10, receipts.MIN_OVERLAP_SECONDS - 1])
async def test_an_overlap_shorter_than_the_reload_never_lets_the_old_key_sign_past_its_period(
    overlap: int,
    real_redis_async,  # type: ignore[no-untyped-def]
) -> None:
    """A process that read the ring just before the rotation signs with the old key until its next
    reload: whatever overlap was asked, every receipt it signs meanwhile verifies."""
    clock = [float(T0)]
    store = EventStore(real_redis_async)
    signer = ReceiptSigner(
        store, "tables.example", clock=lambda: clock[0], reload_seconds=receipts.RELOAD_SECONDS
    )
    await signer.sign(RECEIPT)  # the ring is read at T0
    rotated = await store.run(receipts.rotate_keys(T0 + 1, overlap=overlap))
    assert rotated.keys[0].public.not_after == T0 + 1 + receipts.MIN_OVERLAP_SECONDS
    signed = []
    for second in range(2, int(receipts.RELOAD_SECONDS) + 5, 3):
        clock[0] = T0 + second
        signed.append(await signer.sign(RECEIPT))
    assert {s["key_id"] for s in signed} == {rotated.keys[0].key_id, rotated.current.key_id}
    assert all(verify_receipt(s, rotated.public_keys()) is ReceiptCheck.OK for s in signed)


@pytest.mark.anyio
async def test_a_process_signs_with_the_rotated_key_once_it_reloads_the_ring(real_redis_async) -> None:  # type: ignore[no-untyped-def]
    clock = [float(T0)]
    store = EventStore(real_redis_async)
    signer = ReceiptSigner(store, "tables.example", clock=lambda: clock[0], reload_seconds=60)
    first = await signer.sign(RECEIPT)
    assert first["signed_at"] == T0 and {k: first[k] for k in RECEIPT} == RECEIPT
    rotated = await store.run(receipts.rotate_keys(T0 + 10, overlap=120))
    clock[0] = T0 + 30
    assert (await signer.sign(RECEIPT))["key_id"] == first["key_id"]  # not reloaded yet: still valid
    clock[0] = T0 + 61
    late = await signer.sign(RECEIPT)
    assert late["key_id"] == rotated.current.key_id
    for signed in (first, late):
        assert verify_receipt(signed, rotated.public_keys()) is ReceiptCheck.OK


def test_a_ring_made_without_a_name_takes_a_unique_one_so_two_deployments_logs_never_share_an_origin() -> (
    None
):
    names = set()
    for _ in range(2):  # two deployments, each on a Redis of its own
        store = SyncEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()))
        ring = store.run(receipts.ensure_keys(T0))
        assert store.run(receipts.ensure_keys(T0 + 10)).current.public.name == ring.current.public.name
        names.add(ring.current.public.name)
    assert len(names) == 2 and all(name.startswith("tablestream/") for name in names)


def test_the_key_name_is_the_setting_else_the_public_origin_s_host_else_left_to_the_ring() -> None:
    assert Settings(signing_key_name="keys.example/log", public_origin="https://x.example").key_name == (
        "keys.example/log"
    )
    assert Settings(public_origin="https://Tables.Example:8443").key_name == "tables.example:8443"
    assert Settings().key_name == ""
    with pytest.raises(ValueError, match="TABLESTREAM_SIGNING_KEY_NAME"):
        Settings(signing_key_name="two words")
