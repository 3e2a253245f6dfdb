"""Idempotent table creation: what a client's ``Idempotency-Key`` already created.

A record lives under the SHA-256 of the key (never the key itself) for 24 hours: the fingerprint of
the body it came with, then the game id and the host token sealed with a keystream derived from the
key, so a copy of the database alone yields no host token. While the first request runs, the record
is a short-lived claim (``pending``), so two requests with one key never both create a table.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Literal

import msgspec
import redis.asyncio as aioredis

from services.store.keys import IDEMPOTENCY_PREFIX

KEEP_SECONDS = 24 * 3600
CLAIM_SECONDS = 60  # a creator that died mid-request frees its key after this


class _Record(msgspec.Struct, frozen=True, omit_defaults=True):
    fingerprint: str
    game_id: str = ""
    sealed_token: str = ""


@dataclass(frozen=True)
class Claim:
    """``claimed``: this request goes ahead; ``done``: the key already created ``game_id``;
    ``pending``: another request with the key is running; ``mismatch``: the key came with another body."""

    state: Literal["claimed", "done", "pending", "mismatch"]
    game_id: str = ""
    host_token: str = ""


def _digest(key: str) -> str:
    return hashlib.sha256(b"tablestream-idempotency-v1\0" + key.encode()).hexdigest()


def _keystream(key: str, length: int) -> bytes:
    stream = b""
    counter = 0
    while len(stream) < length:
        stream += hmac.new(key.encode(), b"host-token" + counter.to_bytes(4, "big"), "sha256").digest()
        counter += 1
    return stream[:length]


def seal(key: str, token: str) -> str:
    raw = token.encode()
    return bytes(a ^ b for a, b in zip(raw, _keystream(key, len(raw)), strict=True)).hex()


def unseal(key: str, sealed: str) -> str:
    raw = bytes.fromhex(sealed)
    return bytes(a ^ b for a, b in zip(raw, _keystream(key, len(raw)), strict=True)).decode()


class IdempotencyStore:
    def __init__(self, redis: aioredis.Redis | aioredis.RedisCluster) -> None:
        self._redis = redis

    async def claim(self, key: str, fingerprint: str) -> Claim:
        name = IDEMPOTENCY_PREFIX + _digest(key)
        pending = msgspec.json.encode(_Record(fingerprint))
        if await self._redis.set(name, pending, nx=True, ex=CLAIM_SECONDS):
            return Claim("claimed")
        raw = await self._redis.get(name)
        if raw is None:  # expired between the two calls: claim again
            return await self.claim(key, fingerprint)
        record = msgspec.json.decode(raw, type=_Record)
        if not hmac.compare_digest(record.fingerprint, fingerprint):
            return Claim("mismatch")
        if not record.game_id:
            return Claim("pending")
        return Claim("done", record.game_id, unseal(key, record.sealed_token))

    async def known(self, key: str) -> bool:
        """Whether the key has a record (done, or its first request running): a request with it
        creates no new table, whatever it is answered."""
        return bool(await self._redis.exists(IDEMPOTENCY_PREFIX + _digest(key)))

    async def finish(self, key: str, fingerprint: str, game_id: str, host_token: str) -> None:
        record = _Record(fingerprint, game_id, seal(key, host_token))
        await self._redis.set(IDEMPOTENCY_PREFIX + _digest(key), msgspec.json.encode(record), ex=KEEP_SECONDS)

    async def release(self, key: str) -> None:
        """Forget a claim whose request failed, so that a retry with the key can create the table."""
        await self._redis.delete(IDEMPOTENCY_PREFIX + _digest(key))


# -- joins ----------------------------------------------------------------------------------------
# ``POST /games/{id}/players`` with an ``Idempotency-Key``: the record (24 hours, under the SHA-256
# of the key in a scope of its own) holds the body's fingerprint, the seat token sealed with the
# key (chosen before the first try, so that every try binds the same token), and the seat the last
# try appended a join for. The join's record id is derived from the key, so a retry finds out from
# the stream itself whether that join was written (also when its first answer was a 503
# ``not_replicated``). A short lock lets one request with the key run at a time: a concurrent one
# is a 409 ``idempotency_key_in_use``, and no key ever seats twice.


class _JoinRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    fingerprint: str
    sealed_token: str
    seat: int = -1


def _join_digest(key: str) -> str:
    return hashlib.sha256(b"tablestream-join-idempotency-v1\0" + key.encode()).hexdigest()


@dataclass
class JoinAttempt:
    """The request that holds a key's lock: the token every try binds, the join record id, and the
    seat a try appended a join for before (``None``: no try got that far)."""

    store: JoinIdempotency
    key: str
    fingerprint: str
    token: str
    seat: int | None

    @property
    def record_id(self) -> str:
        return "join-" + _join_digest(self.key)[:24]

    async def note(self, seat: int) -> None:
        """Written before each try's append: the seat that try may take."""
        self.seat = seat
        await self.store.write(self.key, _JoinRecord(self.fingerprint, seal(self.key, self.token), seat))


class JoinIdempotency:
    def __init__(self, redis: aioredis.Redis | aioredis.RedisCluster) -> None:
        self._redis = redis

    def _name(self, key: str) -> str:
        return IDEMPOTENCY_PREFIX + "join:" + _join_digest(key)

    async def begin(self, key: str, fingerprint: str, fresh_token: str) -> JoinAttempt | Claim:
        """Take the key's lock and its record: a ``JoinAttempt`` to go ahead with, or a ``Claim`` in
        state ``pending`` (another request with the key is running) or ``mismatch`` (another body)."""
        name = self._name(key)
        if not await self._redis.set(name + ":running", "1", nx=True, ex=CLAIM_SECONDS):
            return Claim("pending")
        try:
            raw = await self._redis.get(name)
            if raw is None:
                attempt = JoinAttempt(self, key, fingerprint, fresh_token, None)
                await self.write(key, _JoinRecord(fingerprint, seal(key, fresh_token)))
                return attempt
            record = msgspec.json.decode(raw, type=_JoinRecord)
            if not hmac.compare_digest(record.fingerprint, fingerprint):
                await self.end(key)
                return Claim("mismatch")
            seat = record.seat if record.seat >= 0 else None
            return JoinAttempt(self, key, fingerprint, unseal(key, record.sealed_token), seat)
        except BaseException:
            await self.end(key)
            raise

    async def write(self, key: str, record: _JoinRecord) -> None:
        await self._redis.set(self._name(key), msgspec.json.encode(record), ex=KEEP_SECONDS)

    async def end(self, key: str) -> None:
        """Free the key's lock (the record stays: a retry answers from it)."""
        await self._redis.delete(self._name(key) + ":running")
