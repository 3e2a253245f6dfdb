"""The fair-randomness derivation of docs/fairness.md, checked against its own definitions."""

from __future__ import annotations

import hashlib
import hmac
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.fairness import (
    CHAIN_LENGTH,
    Chance,
    DrawStream,
    RevealedSeeds,
    SecretSeeds,
    SeedNotRevealed,
    chain_position,
    player_mix,
    round_key,
    seed_chain,
    verify_reveal,
)


def test_each_seed_of_the_chain_hashes_to_the_one_before_it() -> None:
    chain = seed_chain(b"\x01" * 32)
    assert len(chain) == CHAIN_LENGTH + 1
    assert chain[-1] == b"\x01" * 32
    for earlier, later in itertools.pairwise(chain):
        assert hashlib.sha256(later).digest() == earlier


def test_a_revealed_seed_checks_against_the_commitment_only_at_its_own_index() -> None:
    seeds = SecretSeeds(b"r" * 32, b"m" * 32)
    commitment = seeds.chain_commitment(0)
    assert verify_reveal(seeds.round_seed(5), 5, commitment)
    assert not verify_reveal(seeds.round_seed(5), 4, commitment)
    assert not verify_reveal(b"x" * 32, 5, commitment)


def test_rounds_past_the_first_chain_use_a_fresh_chain_from_the_master_secret() -> None:
    seeds = SecretSeeds(b"r" * 32, b"m" * 32)
    assert chain_position(64) == (0, 64)
    assert chain_position(65) == (1, 1)
    assert verify_reveal(seeds.round_seed(65), 1, seeds.chain_commitment(1))
    assert seeds.chain_commitment(1) != seeds.chain_commitment(0)
    # revealing the whole first chain says nothing about the second: it derives from ``master``
    assert seeds.chain_commitment(1) == SecretSeeds(b"q" * 32, b"m" * 32).chain_commitment(1)


def test_the_mix_length_prefixes_every_part_so_seeds_cannot_be_shifted_between_players() -> None:
    assert player_mix("g", ["ab", "c"]) != player_mix("g", ["a", "bc"])
    expected = hashlib.sha256()
    for part in (b"tablestream-v1", b"g", b"ab", b"c"):
        expected.update(len(part).to_bytes(4, "big") + part)
    assert player_mix("g", ["ab", "c"]) == expected.digest()


def test_the_round_key_is_hmac_of_the_mix_and_the_round_number() -> None:
    key = round_key(b"s" * 32, b"m" * 32, 3)
    assert key == hmac.new(b"s" * 32, b"m" * 32 + (3).to_bytes(4, "big"), hashlib.sha256).digest()


def test_a_draw_stream_is_hmac_blocks_of_the_label_and_a_counter() -> None:
    stream = DrawStream(b"k" * 32, "deal")
    first = hmac.new(b"k" * 32, b"deal" + (0).to_bytes(4, "big"), hashlib.sha256).digest()
    second = hmac.new(b"k" * 32, b"deal" + (1).to_bytes(4, "big"), hashlib.sha256).digest()
    assert stream.take(40) == (first + second)[:40]
    assert stream.take(24) == (first + second)[40:]


@given(n=st.integers(1, 2**40), key=st.binary(min_size=32, max_size=32))
def test_uniform_draws_stay_in_range_and_follow_the_rejection_rule(n: int, key: bytes) -> None:
    value = DrawStream(key, "x").uniform(n)
    assert 0 <= value < n
    replay = DrawStream(key, "x")
    limit = 2**64 - (2**64 % n)
    while (x := int.from_bytes(replay.take(8), "big")) >= limit:
        pass
    assert value == x % n


@given(items=st.lists(st.integers(), max_size=60), key=st.binary(min_size=32, max_size=32))
def test_a_shuffle_is_a_deterministic_permutation(items: list[int], key: bytes) -> None:
    shuffled = DrawStream(key, "deal").shuffle(items)
    assert sorted(shuffled) == sorted(items)
    assert DrawStream(key, "deal").shuffle(items) == shuffled


def test_offline_draws_from_revealed_seeds_equal_the_servers_draws() -> None:
    secret = SecretSeeds(b"r" * 32, b"m" * 32)
    mix = player_mix("game", ["a", "b"])
    revealed = RevealedSeeds({2: secret.round_seed(2)}, {0: secret.chain_commitment(0)})
    deck = list(range(1, 105))
    assert Chance(revealed, mix).shuffle(2, "deal", deck) == Chance(secret, mix).shuffle(2, "deal", deck)
    with pytest.raises(SeedNotRevealed):
        Chance(revealed, mix).shuffle(3, "deal", deck)
