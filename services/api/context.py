"""What the running app holds: its settings and the connected parts, built once in the lifespan."""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio as aioredis
from starlette.requests import HTTPConnection

from services.config import Settings
from services.handler import CommandHandler
from services.store import EventStore
from services.tokens import TokenStore


@dataclass
class Services:
    settings: Settings
    redis: aioredis.Redis
    store: EventStore
    tokens: TokenStore
    handler: CommandHandler


def services(conn: HTTPConnection) -> Services:
    found: Services = conn.app.state.ts
    return found
