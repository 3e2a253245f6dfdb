"""The login flood of issue 24, against any running ``serve``: many concurrent wrong logins from one
client while a bystander reads a table's view, the server process's memory sampled from /proc; then
how many guesses one address gets at one account in a given time.

Used by ``test_login_flood.py`` and runnable by hand against any build (the figures in
docs/security.md were measured so, before and after)::

    python -m tests.services.hardening.login_flood --url http://127.0.0.1:8000 --pid <serve's pid>
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

MIB = 1024 * 1024


def rss_bytes(pid: int) -> int:
    """The process's resident memory now (VmRSS of /proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


@dataclass
class Flood:
    """What a flood did: answers to the attacker by status, the bystander's view latencies and
    statuses, the server's resident memory before and at its highest during the flood."""

    attacker: Counter[int] = field(default_factory=Counter)
    codes: Counter[str] = field(default_factory=Counter)
    bystander_seconds: list[float] = field(default_factory=list)
    bystander_statuses: Counter[int] = field(default_factory=Counter)
    rss_before: int = 0
    rss_peak: int = 0

    @property
    def growth_mib(self) -> float:
        return (self.rss_peak - self.rss_before) / MIB

    def bystander_p95_ms(self) -> float:
        if len(self.bystander_seconds) < 2:
            return float("nan")
        return statistics.quantiles(self.bystander_seconds, n=20)[-1] * 1000

    def summary(self) -> str:
        return (
            f"RSS {self.rss_before / MIB:.0f} MiB -> peak {self.rss_peak / MIB:.0f} MiB "
            f"(+{self.growth_mib:.0f} MiB); attacker answers {dict(sorted(self.attacker.items()))} "
            f"codes {dict(self.codes)}; bystander {sum(self.bystander_statuses.values())} views, "
            f"statuses {dict(self.bystander_statuses)}, p95 {self.bystander_p95_ms():.0f} ms"
        )


async def prepare(base: str, name: str, password: str) -> str:
    """An account with a password (the target) and a waiting table whose view the bystander reads."""
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        registered = await client.post("/accounts", json={"name": name, "password": password})
        assert registered.status_code == 201, registered.text
        created = await client.post("/games", json={"game": "skull", "players": 3})
        assert created.status_code == 201, created.text
        game_id: str = created.json()["game_id"]
        return game_id


async def flood(
    base: str,
    pid: int,
    name: str,
    game_id: str,
    concurrent: int = 40,
    seconds: float = 10,
    spread: bool = False,
) -> Flood:
    """``concurrent`` clients send wrong logins for ``name`` for ``seconds``; a bystander reads the
    table's view all along; the server's RSS is sampled every 50 ms. ``spread``: each client has an
    address of its own (``X-Forwarded-For``, for a server that trusts this one as its proxy) and
    tries a new name each time, so that only the Argon2 pool stands between it and the memory."""
    result = Flood(rss_before=rss_bytes(pid))
    result.rss_peak = result.rss_before
    stop = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=concurrent + 5, max_keepalive_connections=concurrent + 5)

    async def attacker(client: httpx.AsyncClient, index: int) -> None:
        guess = 0
        while time.monotonic() < stop:
            guess += 1
            body = {
                "name": f"{name} {index}-{guess}" if spread else name,
                "password": f"wrong {index}-{guess}",
            }
            headers = {"X-Forwarded-For": f"10.99.{index}.1"} if spread else None
            try:
                response = await client.post("/accounts/login", json=body, headers=headers)
            except httpx.TransportError:
                result.attacker[0] += 1
                continue
            result.attacker[response.status_code] += 1
            if response.status_code >= 400:
                result.codes[response.json().get("error", {}).get("code", "?")] += 1

    async def bystander() -> None:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            while time.monotonic() < stop:
                started = time.perf_counter()
                response = await client.get(f"/games/{game_id}/view")
                result.bystander_seconds.append(time.perf_counter() - started)
                result.bystander_statuses[response.status_code] += 1
                await asyncio.sleep(0.05)

    async def sampler() -> None:
        while time.monotonic() < stop + 1:
            result.rss_peak = max(result.rss_peak, rss_bytes(pid))
            await asyncio.sleep(0.05)

    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
        await asyncio.gather(sampler(), bystander(), *(attacker(client, i) for i in range(concurrent)))
    return result


async def guesses_per_minute(
    base: str, name: str, seconds: float = 20, headers: dict[str, str] | None = None
) -> tuple[float, Counter[int]]:
    """One client, one request at a time, wrong passwords for ``name`` for ``seconds``: the verdicts
    it got (401, each a real guess checked) per minute, and every answer by status. ``headers``: e.g.
    an ``X-Forwarded-For`` naming the client to a server that trusts this one as its proxy."""
    statuses: Counter[int] = Counter()
    stop = time.monotonic() + seconds
    async with httpx.AsyncClient(base_url=base, timeout=60, headers=headers) as client:
        while time.monotonic() < stop:
            body = {"name": name, "password": f"guess {uuid.uuid4().hex}"}
            statuses[(await client.post("/accounts/login", json=body)).status_code] += 1
    return statuses[401] * 60 / seconds, statuses


async def guesses_until_throttled(
    base: str, name: str, headers: dict[str, str] | None = None, after: int = 3, deadline: float = 120
) -> Counter[int]:
    """One client, one request at a time, wrong passwords for ``name`` until the first 429, then
    ``after`` more: every answer by status. A loaded machine takes longer to reach the throttle,
    never a different count of verdicts; ``deadline`` seconds bound the wait for it."""
    statuses: Counter[int] = Counter()
    stop = time.monotonic() + deadline
    async with httpx.AsyncClient(base_url=base, timeout=60, headers=headers) as client:
        while statuses[429] < 1 + after and time.monotonic() < stop:
            body = {"name": name, "password": f"guess {uuid.uuid4().hex}"}
            statuses[(await client.post("/accounts/login", json=body)).status_code] += 1
    return statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", required=True)
    parser.add_argument("--pid", type=int, required=True, help="the serve process (its RSS is measured)")
    parser.add_argument("--concurrent", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--guess-seconds", type=float, default=20)
    parser.add_argument("--phases", default="flood,guess", help="flood, guess or both (comma-separated)")
    args = parser.parse_args()
    suffix = uuid.uuid4().hex[:6]

    async def run() -> None:
        phases = set(args.phases.split(","))
        if "flood" in phases:
            game_id = await prepare(args.url, f"victim {suffix}", "the right password")
            result = await flood(
                args.url, args.pid, f"victim {suffix}", game_id, args.concurrent, args.seconds
            )
            print(
                f"flood: {args.concurrent} concurrent wrong logins for {args.seconds:g} s: {result.summary()}"
            )
        if "guess" not in phases:
            return
        await prepare(args.url, f"target {suffix}", "the right password")
        rate, statuses = await guesses_per_minute(args.url, f"target {suffix}", args.guess_seconds)
        print(
            f"guessing: {rate:.0f} checked guesses a minute from one address at one account "
            f"({dict(statuses)})"
        )

    asyncio.run(run())


if __name__ == "__main__":
    main()
