"""A game's timer as stored: one field, ``t``, of the game's timer hash, holding its parts in a fixed
order, space-separated, ``-`` for a part it lacks, trailing ``-`` parts left out:
``"<version> <deadline> <kind> <seats> <turn_seconds>"`` (a turn timer), ``"<version> <deadline>
expire"``, ``"<version>"`` (cleared), ``"<version> - turn 1,2 60"`` (a deadline taken off).

One field instead of five rewritten (and the hash deleted) per command: an append's timer costs one
short ``HSET`` in the append-only file (none when it arms nothing: a table without a deadline). A
hash written before (fields ``version``, ``deadline``, ``kind``, ``seats``, ``turn_seconds``) reads
the same; the scripts that write a timer (``append.lua``, ``arm_timer.lua``, ``drop_timer.lua``)
replace it by the packed field the first time they write one.
"""

from __future__ import annotations

from collections.abc import Mapping

from services.store.requests import text_map

FIELD = "t"
PARTS = ("version", "deadline", "kind", "seats", "turn_seconds")
ABSENT = "-"


def timer_fields(reply: Mapping[bytes, bytes] | Mapping[str, str]) -> dict[str, str]:
    """The timer's fields (``version``, ``deadline``, ...; the absent ones left out) from its hash as
    read (``HGETALL``), packed or in the fields written before the packed form."""
    stored = text_map(reply)
    packed = stored.get(FIELD)
    if packed is None:
        return stored
    return {name: part for name, part in zip(PARTS, packed.split(" "), strict=False) if part != ABSENT}


def pack(fields: Mapping[str, str | int]) -> str:
    """The stored value of a timer with ``fields`` (as the scripts write it; for tests and tools)."""
    unknown = set(fields) - set(PARTS)
    if unknown:
        raise ValueError(f"a timer has no field {sorted(unknown)}")
    parts = []
    for name in PARTS:
        value = str(fields.get(name, ""))
        if " " in value or value == ABSENT:
            raise ValueError(f"a timer's {name} holds no space and is not {ABSENT!r}: {value!r}")
        parts.append(value or ABSENT)
    while parts and parts[-1] == ABSENT:
        parts.pop()
    return " ".join(parts)
