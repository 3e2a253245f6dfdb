"""Provably fair randomness (docs/fairness.md), as pure functions: seeds in, draws out.

The server commits to a hash chain of seeds before anyone joins; round ``r`` draws from
``k_r = HMAC(s_r, mix || u32(r))`` where ``mix`` binds every player's client seed. Nothing here
touches a clock, the OS or global randomness: the caller hands in the secret (or the revealed
seeds, when an auditor re-derives a game offline).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import Protocol, TypeVar

T = TypeVar("T")

CHAIN_LENGTH = 64  # K: seeds s_1..s_K of one chain serve rounds 1..K of that chain
MIX_DOMAIN = b"tablestream-v1"
EXTENSION_DOMAIN = b"tablestream-chain"
BOT_DOMAIN = b"tablestream-bot"
_U64 = 1 << 64


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _u32(n: int) -> bytes:
    return n.to_bytes(4, "big")


def seed_chain(root: bytes, length: int = CHAIN_LENGTH) -> list[bytes]:
    """``[s_0, s_1, ..., s_K]`` with ``s_K = root`` and ``s_{i-1} = SHA-256(s_i)``."""
    chain = [root]
    for _ in range(length):
        chain.append(sha256(chain[-1]))
    chain.reverse()
    return chain


def commitment_of(root: bytes) -> str:
    """The public commitment ``s_0`` (hex) of the chain ending in ``root``."""
    return seed_chain(root)[0].hex()


def chain_position(round_number: int) -> tuple[int, int]:
    """Which chain serves a 1-based round, and the seed index inside it (1..K)."""
    if round_number < 1:
        raise ValueError("rounds are numbered from 1")
    return (round_number - 1) // CHAIN_LENGTH, (round_number - 1) % CHAIN_LENGTH + 1


def verify_reveal(seed: bytes, index: int, commitment_hex: str) -> bool:
    """True when hashing the revealed ``s_index`` ``index`` times gives the chain's ``s_0``."""
    value = seed
    for _ in range(index):
        value = sha256(value)
    return value.hex() == commitment_hex


def player_mix(game_id: str, client_seeds: Sequence[str]) -> bytes:
    """SHA-256 over the domain tag, the game id and every client seed in seat order, length-prefixed."""
    h = hashlib.sha256()
    for part in (MIX_DOMAIN, game_id.encode(), *(s.encode() for s in client_seeds)):
        h.update(_u32(len(part)))
        h.update(part)
    return h.digest()


def round_key(seed: bytes, mix: bytes, round_number: int) -> bytes:
    return hmac.new(seed, mix + _u32(round_number), hashlib.sha256).digest()


class DrawStream:
    """The byte stream of one purpose: HMAC(k_r, label || u32(0)) || HMAC(k_r, label || u32(1)) || ..."""

    def __init__(self, key: bytes, label: str) -> None:
        self._key = key
        self._label = label.encode("ascii")
        self._block = 0
        self._buffer = b""

    def take(self, count: int) -> bytes:
        while len(self._buffer) < count:
            self._buffer += hmac.new(self._key, self._label + _u32(self._block), hashlib.sha256).digest()
            self._block += 1
        out, self._buffer = self._buffer[:count], self._buffer[count:]
        return out

    def uniform(self, n: int) -> int:
        """Uniform integer in ``[0, n)`` by rejection sampling on big-endian u64s."""
        if n < 1:
            raise ValueError("uniform needs n >= 1")
        limit = _U64 - (_U64 % n)
        while True:
            x = int.from_bytes(self.take(8), "big")
            if x < limit:
                return x % n

    def shuffle(self, items: Sequence[T]) -> list[T]:
        """Fisher-Yates from the canonical order: for i = len-1 down to 1, swap a[i], a[uniform(i + 1)]."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.uniform(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


class SeedSource(Protocol):
    """Where round seeds come from: the server's secret, or the seeds revealed so far."""

    def round_seed(self, round_number: int) -> bytes: ...

    def chain_commitment(self, chain: int) -> str: ...


class SecretSeeds:
    """The server-side secret of one game: chain 0 ends in ``root``; later chains derive from ``master``.

    ``master`` never leaves the secret key, so revealing every seed of chain ``c`` says nothing about
    chain ``c + 1``.
    """

    def __init__(self, root: bytes, master: bytes) -> None:
        self._roots: dict[int, bytes] = {0: root}
        self._master = master
        self._chains: dict[int, list[bytes]] = {}

    def _chain(self, chain: int) -> list[bytes]:
        if chain not in self._chains:
            if chain not in self._roots:
                self._roots[chain] = hmac.new(
                    self._master, EXTENSION_DOMAIN + _u32(chain), hashlib.sha256
                ).digest()
            self._chains[chain] = seed_chain(self._roots[chain])
        return self._chains[chain]

    def round_seed(self, round_number: int) -> bytes:
        chain, index = chain_position(round_number)
        return self._chain(chain)[index]

    def chain_commitment(self, chain: int) -> str:
        return self._chain(chain)[0].hex()

    def bot_key(self, game_id: str, version: int, seat: int) -> bytes:
        """The key of a bot's chance for ``seat`` on the game at ``version``:
        HMAC-SHA256(master, "tablestream-bot" || u32 len || game id || u32(version) || u32(seat)).

        From ``master``, which is drawn with the game (before anyone joins) and never revealed, so
        no seat can compute it, during the game or after, while the server can again (a retried
        bot job makes the same choice). Not from a round seed: those are revealed when their round
        ends, and would then name a bot's hidden choices that the rules keep hidden for ever (the
        discs nobody flipped in Skull)."""
        ident = game_id.encode()
        message = BOT_DOMAIN + _u32(len(ident)) + ident + _u32(version) + _u32(seat)
        return hmac.new(self._master, message, hashlib.sha256).digest()


class SeedNotRevealed(LookupError):
    """An offline check asked for a round whose seed has not been revealed."""


class RevealedSeeds:
    """Seeds as published in ``seed_revealed`` events, plus the recorded chain commitments."""

    def __init__(self, seeds: dict[int, bytes], commitments: dict[int, str]) -> None:
        self._seeds = seeds
        self._commitments = commitments

    def round_seed(self, round_number: int) -> bytes:
        if round_number not in self._seeds:
            raise SeedNotRevealed(f"the seed of round {round_number} is not revealed")
        return self._seeds[round_number]

    def chain_commitment(self, chain: int) -> str:
        if chain not in self._commitments:
            raise SeedNotRevealed(f"chain {chain} has no recorded commitment")
        return self._commitments[chain]


class Chance:
    """Every random draw of a game, derived from the seed of its round and the players' mix."""

    def __init__(self, seeds: SeedSource, mix: bytes) -> None:
        self._seeds = seeds
        self._mix = mix

    def stream(self, round_number: int, label: str) -> DrawStream:
        return DrawStream(round_key(self._seeds.round_seed(round_number), self._mix, round_number), label)

    def uniform(self, round_number: int, label: str, n: int) -> int:
        return self.stream(round_number, label).uniform(n)

    def shuffle(self, round_number: int, label: str, items: Sequence[T]) -> list[T]:
        return self.stream(round_number, label).shuffle(items)

    def reveal(self, round_number: int) -> str:
        """The hex seed of a finished round, for its ``seed_revealed`` event."""
        return self._seeds.round_seed(round_number).hex()

    def chain_commitment(self, chain: int) -> str:
        return self._seeds.chain_commitment(chain)
