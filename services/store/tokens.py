"""Bearer tokens: unguessable (192 bits), one per seat plus the host's, stored only as SHA-256.

Each process remembers the roles of the tokens it has looked up (a bounded LRU of digests, never
the tokens). A remembered role is only ever an assumption: whoever uses it reads the token's role
again in the same round trip as the reads made for it (``services.table.callers.TokenCheck``), so a token
revoked or rebound by another process is never honoured from memory. Binding and revoking announce
themselves on the game's live channel (``set_token.lua``): API processes drop the views they keep
for the game (``services.api.view_cache``).
"""

from __future__ import annotations

import hashlib
import secrets
from collections import OrderedDict
from dataclasses import dataclass

import redis.asyncio as aioredis

from services.store.keys import game_keys
from services.store.requests import SCRIPTS

REMEMBERED_TOKENS = 65_536
"""Token roles a process keeps in memory (about 200 bytes each)."""


def digest_of(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Remembered:
    """A token's role as this process last read it: ``"host"`` or a seat number as a string."""

    digest: str
    role: str


class TokenStore:
    def __init__(
        self, redis: aioredis.Redis | aioredis.RedisCluster, remember: int = REMEMBERED_TOKENS
    ) -> None:
        self._redis = redis
        self._set = redis.register_script(SCRIPTS["set_token"])
        self._remembered: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._capacity = remember

    async def issue(self, game_id: str, role: str) -> str:
        token = secrets.token_urlsafe(24)
        await self.bind(game_id, token, role)
        return token

    async def bind(self, game_id: str, token: str, role: str) -> None:
        """Bind before the seat is taken: a join that then loses its race rebinds the same token."""
        digest = digest_of(token)
        self._remembered.pop((game_id, digest), None)
        await self._write(game_id, digest, role)

    async def role(self, game_id: str, token: str) -> str | None:
        """``"host"``, a seat number as a string, or ``None`` for an unknown token (read from Redis)."""
        digest = digest_of(token)
        value = await self._redis.hget(game_keys(game_id).tokens, digest)
        role = value.decode() if isinstance(value, bytes) else value
        if role is not None:
            self._remember(game_id, digest, role)
        return role

    def remembered(self, game_id: str, token: str) -> Remembered | None:
        """The role this process last read for ``token``, without I/O; an assumption to verify."""
        digest = digest_of(token)
        role = self._remembered.get((game_id, digest))
        if role is None:
            return None
        self._remembered.move_to_end((game_id, digest))
        return Remembered(digest, role)

    def forget(self, game_id: str, digest: str) -> None:
        self._remembered.pop((game_id, digest), None)

    async def revoke(self, game_id: str, token: str) -> None:
        """The token no longer opens anything (a player who left)."""
        digest = digest_of(token)
        self.forget(game_id, digest)
        await self._write(game_id, digest, "")

    async def revoke_role(self, game_id: str, role: str) -> int:
        """Every token of ``role`` (a seat, as a string) stops opening anything (a banned account's
        seat); returns how many there were."""
        found = await self._redis.hgetall(game_keys(game_id).tokens)
        digests = [
            (d.decode() if isinstance(d, bytes) else d)
            for d, r in found.items()
            if (r.decode() if isinstance(r, bytes) else r) == role
        ]
        for digest in digests:
            self.forget(game_id, digest)
            await self._write(game_id, digest, "")
        return len(digests)

    async def _write(self, game_id: str, digest: str, role: str) -> None:
        k = game_keys(game_id)
        await self._set(keys=[k.tokens], args=[k.live, digest, role])

    def _remember(self, game_id: str, digest: str, role: str) -> None:
        self._remembered[(game_id, digest)] = role
        self._remembered.move_to_end((game_id, digest))
        while len(self._remembered) > self._capacity:
            self._remembered.popitem(last=False)
