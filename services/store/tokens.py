"""Bearer tokens: unguessable (192 bits), one per seat plus the host's, stored only as SHA-256."""

from __future__ import annotations

import hashlib
import secrets

import redis.asyncio as aioredis

from services.store.keys import game_keys


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class TokenStore:
    def __init__(self, redis: aioredis.Redis | aioredis.RedisCluster) -> None:
        self._redis = redis

    async def issue(self, game_id: str, role: str) -> str:
        token = secrets.token_urlsafe(24)
        await self.bind(game_id, token, role)
        return token

    async def bind(self, game_id: str, token: str, role: str) -> None:
        """Bind before the seat is taken: a join that then loses its race rebinds the same token."""
        await self._redis.hset(game_keys(game_id).tokens, _digest(token), role)

    async def role(self, game_id: str, token: str) -> str | None:
        """``"host"``, a seat number as a string, or ``None`` for an unknown token."""
        value = await self._redis.hget(game_keys(game_id).tokens, _digest(token))
        return value.decode() if isinstance(value, bytes) else value

    async def revoke(self, game_id: str, token: str) -> None:
        """The token no longer opens anything (a player who left)."""
        await self._redis.hdel(game_keys(game_id).tokens, _digest(token))
