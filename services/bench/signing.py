"""The cost of signed receipts (docs/benchmarks.md, "Signed receipts"): the CPU of one receipt's
Ed25519 signature (what every accepted command adds on the API) and of its verification (what a
player's verifier spends per kept receipt), measured in this process with ``time.process_time``.

``tablestream bench`` puts it beside the full command's CPU per command, which includes the
signature: the command without it is that figure less the signing row's. Alone:
``python -m services.bench.signing [--count N]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass

from services.bench.report import Row, micros
from services.fairness.signing import KeyRing, sign_receipt, verify_receipt

RECEIPT = {"game_id": "bench-game-0001", "version": 1234, "hash": "ab" * 32}


@dataclass(frozen=True)
class SigningCost:
    count: int
    sign: float  # CPU seconds per receipt signed
    verify: float  # CPU seconds per receipt verified

    def figure(self) -> str:
        return (
            f"sign {micros(self.sign)} CPU per receipt, verify {micros(self.verify)} ({self.count:,} of each)"
        )


def measure(count: int = 20_000) -> SigningCost:
    ring = KeyRing.generate(int(time.time()))
    keys = ring.public_keys()
    now = int(time.time())
    for _ in range(min(count, 500)):  # warm-up: OpenSSL's tables, the interpreter's caches
        verify_receipt(sign_receipt(RECEIPT, ring.current, now), keys)
    start = time.process_time()
    signed = [sign_receipt(RECEIPT, ring.current, now) for _ in range(count)]
    sign = (time.process_time() - start) / count
    start = time.process_time()
    for receipt in signed:
        verify_receipt(receipt, keys)
    verify = (time.process_time() - start) / count
    return SigningCost(count, sign, verify)


def signing_row(cost: SigningCost, command_cpu: float | None) -> Row:
    """The signing row; ``command_cpu``: the full command's server CPU per accepted command."""
    notes = []
    ratio = None
    if command_cpu:
        ratio = cost.sign / command_cpu
        notes.append(
            f"full command {micros(command_cpu)} CPU per command with signing, "
            f"{micros(command_cpu - cost.sign)} without: signing is {ratio:.1%} of it"
        )
    return Row("signed receipts (Ed25519, in process)", cost.figure(), notes=notes)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m services.bench.signing", description=__doc__)
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--command-cpu-us", type=float, default=None, help="a full command's CPU (us)")
    args = parser.parse_args(argv)
    command = args.command_cpu_us / 1e6 if args.command_cpu_us else None
    print(signing_row(measure(args.count), command).render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
