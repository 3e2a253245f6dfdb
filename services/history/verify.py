"""The offline verifier of an exported game (docs/fairness.md "Export"): trust nothing but the rules.

It needs no Redis and no server: only the export document (``services.history.export``). It checks

1. the hash chain, link by link, with versions contiguous from 1 (no gap, duplicate or swap);
2. the seed chain: each revealed seed hashes to its chain's commitment, chain 0's commitment is
   the one ``table_created`` published, every round of a finished game has its seed revealed;
3. the rules: every stored batch is re-run (``services.history.replay``) and must come out byte for byte
   as stored, command record and framing included (each entry's salt is taken from the entry and
   hashed like any other byte; a malformed salt, or a missing one after the stream's first salted
   entry, is a records failure; format 1 streams without salts verify as before);
4. every chance outcome: re-derived from the revealed seed and compared, filed under its round;
5. the final scores and winners against the rules and the export's header (or, for a table an
   operator closed, ``table_closed`` as the ending and the header's ``closed`` against it);
6. the optional chat section: its own hash chain, record by record (``services.history.chat_export``);
7. the receipts a player kept (``KeptReceipt``, ``services.history.verify_receipts``): the history
   must hold each one's hash at its version. A signed receipt's signature is checked by the caller
   (``services.disputes.receipt_check``, with the service's public keys) and its verdict handed in: a
   forged one, or one by an unknown key or a key outside its period, is named as such; a validly
   signed one the history lacks is the proof of a rewritten history.

An export's header (seats, seeds, scores, head) is a convenience for readers; it is checked
against the stream, never trusted. The report is per round (bucket 0 is "setup": the create and
join requests; see ``services.history.replay`` for how events are filed), and each failure names its
round and check, e.g. ``round 3: hash chain: broken at version 57 (...)``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from domain.fairness import CHAIN_LENGTH, chain_position, verify_reveal
from domain.table import SeedChainCommitted, SeedRevealed, TableClosed
from services.history.chat_export import chat_problems
from services.history.export import FORMAT, table_facts
from services.history.records import GENESIS_HASH, Entry, chain_hash, encode_batch, is_salt
from services.history.replay import SETUP, Replay, final_result, replay
from services.history.verify_receipts import KeptReceipt, check_receipts
from services.history.verify_report import (
    CHANCE,
    CHAT,
    HASH_CHAIN,
    HEADER,
    RECORDS,
    RERUN,
    SCORES,
    SEED_CHAIN,
    ChanceOutcome,
    Report,
)

HEX64 = re.compile(r"[0-9a-f]{64}")

__all__ = [
    "HEX64",
    "KeptReceipt",
    "UnreadableExport",
    "parse_entries",
    "read_json",
    "verify_export",
    "verify_file",
]


class UnreadableExport(ValueError):
    """The file or document is not a tablestream export at all (exit code 2, not a failed check)."""


def parse_entries(doc: Any) -> list[Entry]:
    """The stored entries of an export, exactly as stored; ``UnreadableExport`` if it is not one."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UnreadableExport(f"not a {FORMAT} document")
    raw = doc.get("entries")
    if not isinstance(raw, list) or not raw:
        raise UnreadableExport("the export has no entries")
    entries = []
    for item in raw:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("version"), int)
            and isinstance(item.get("hash"), str)
            and isinstance(item.get("data"), str)
        ):
            raise UnreadableExport("an entry is not {version: int, hash: str, data: str}")
        try:
            data = item["data"].encode("utf-8")
        except UnicodeEncodeError as exc:
            raise UnreadableExport(f"an entry's data is not text: {exc}") from None
        entries.append(Entry(item["version"], data, item["hash"]))
    return entries


def verify_export(
    doc: Any,
    receipts: Sequence[tuple[int, str] | KeptReceipt] = (),
    sealed_seeds: Mapping[int, bytes] | None = None,
) -> Report:
    """Check an export document offline; ``receipts`` are those a player kept: (version, hash)
    pairs, or ``KeptReceipt`` values with their signature's verdict. ``sealed_seeds``: seeds of
    rounds the stream has not revealed yet, known to a caller that holds the game's secret (a
    backup's import): they draw like revealed ones, so a running game is checked in full, and each
    is checked against its chain's commitment."""
    entries = parse_entries(doc)
    later = {**_later_seeds(doc), **(sealed_seeds or {})}
    rp = replay(entries, later)
    report = Report(
        game_id=rp.created.game_id if rp.created else None,
        game=rp.created.game if rp.created else None,
        head_version=entries[-1].version,
        head_hash=entries[-1].hash,
    )
    rounds = [batch.event_round(i) for item, batch, i in rp.events()]
    for entry, number in zip(entries, rounds, strict=True):
        report.round(number).versions.append(entry.version)
    _check_hash_chain(report, entries, rounds)
    if rp.problem is not None:
        report.fail(SETUP, RECORDS, rp.problem)
        return report
    _check_records(report, rp, entries)
    _check_rerun(report, rp)
    _check_seeds(report, rp, doc)
    _check_later_seeds(report, rp, later)
    if "cut" in doc:
        _check_cut(report, rp, doc)
    else:
        _check_result(report, rp, doc)
    _check_header(report, rp, doc, entries, rounds)
    check_receipts(report, entries, rounds, receipts, report.game_id)
    if "chat" in doc:  # the optional chat section (services.history.chat_export), apart from the game
        good, problems = chat_problems(doc["chat"], entries[-1].version)
        report.passed(SETUP, CHAT, good)
        for problem in problems:
            report.fail(SETUP, CHAT, problem)
    return report


def read_json(path: str | Path) -> Any:
    """A JSON file's document; ``UnreadableExport`` when it cannot be read as JSON."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UnreadableExport(str(exc)) from None


def verify_file(path: str | Path, receipts: Sequence[tuple[int, str] | KeptReceipt] = ()) -> Report:
    """Read an export file and verify it; ``UnreadableExport`` when it cannot be read as one."""
    return verify_export(read_json(path), receipts)


def _check_hash_chain(report: Report, entries: Sequence[Entry], rounds: Sequence[int]) -> None:
    """Each link on its own, so one altered entry is named alone rather than breaking all after it."""
    prev_hash, prev_version = GENESIS_HASH, 0
    for entry, number in zip(entries, rounds, strict=True):
        v = entry.version
        if v != prev_version + 1:
            if v == prev_version:
                detail = f"version {v} appears twice"
            elif v == prev_version + 2:
                detail = f"version {v - 1} is missing (version {v} follows {prev_version})"
            elif v > prev_version + 2:
                detail = (
                    f"versions {prev_version + 1}-{v - 1} are missing (version {v} follows {prev_version})"
                )
            else:
                detail = f"version {v} is out of order (it follows version {prev_version})"
            report.fail(number, HASH_CHAIN, detail)
        expected = chain_hash(prev_hash, entry.data) if HEX64.fullmatch(prev_hash) else None
        if expected != entry.hash:
            report.fail(
                number, HASH_CHAIN, f"broken at version {v}: its hash is not SHA-256(previous hash || data)"
            )
        else:
            report.passed(number, HASH_CHAIN)
        prev_hash, prev_version = entry.hash, v


def _check_records(report: Report, rp: Replay, entries: Sequence[Entry]) -> None:
    """Readable records, the command on each batch's first record only, and the server's exact framing."""
    position = 0
    salted_since: int | None = None  # the first version of stored format 2 (with a salt)
    for batch in rp.batches:
        prev_hash = entries[position - 1].hash if position else GENESIS_HASH
        position += len(batch.items)
        salts = [item.stored.salt if item.stored is not None else None for item in batch.items]
        well_formed = [salt if salt is None or is_salt(salt) else None for salt in salts]
        expected = None
        if batch.command is not None and batch.rerun is not None and len(batch.rerun) == len(batch.items):
            expected = encode_batch(batch.first_version, prev_hash, batch.command, batch.rerun, well_formed)
        for i, item in enumerate(batch.items):
            number, v = batch.event_round(i), item.version
            problems = []
            if item.problem is not None:
                problems.append(item.problem)
            elif item.stored is not None:
                if salts[i] is not None and well_formed[i] is None:
                    problems.append("its salt is not 128 bits of lowercase hex")
                elif salts[i] is not None and salted_since is None:
                    salted_since = v
                elif salts[i] is None and salted_since is not None:
                    problems.append(
                        f"it has no salt, though the stream is salted since version {salted_since}: "
                        "its hidden fields could be guessed from its published hash"
                    )
                if item.stored.version != v:
                    problems.append(f"the record says version {item.stored.version}")
                if batch.command is None:
                    problems.append("its batch has no command record")
                elif item.stored.command_id != batch.command.id:
                    problems.append(
                        f"command id {item.stored.command_id!r} inside the batch of {batch.command.id!r}"
                    )
            if (
                not problems
                and expected is not None
                and batch.matches(i)
                and expected[i].data != item.entry.data
            ):
                problems.append("the record around the event is not what the server writes for this command")
            for problem in problems:
                report.fail(number, RECORDS, f"version {v}: {problem}")
            if not problems:
                report.passed(number, RECORDS)


def _check_rerun(report: Report, rp: Replay) -> None:
    """Every batch re-run; a differing event is a chance failure if a seed drew it, else a rules one."""
    for batch in rp.batches:
        start = batch.first_version
        what = f"{batch.command.kind} {batch.command.id!r}" if batch.command else "unattributed records"
        if batch.rerun is None:
            report.fail(batch.round, RERUN, f"batch at version {start} ({what}): {batch.error}")
            continue
        for round_number in sorted(batch.pending):
            report.fail(
                round_number, SEED_CHAIN, f"the rules drew from round {round_number}'s seed, never revealed"
            )
        if len(batch.rerun) != len(batch.items):
            report.fail(
                batch.round,
                RERUN,
                f"batch at version {start} ({what}): the rules produce {len(batch.rerun)} events, "
                f"the stream holds {len(batch.items)}",
            )
        clean = True
        for i, item in enumerate(batch.items):
            if i >= len(batch.rerun):
                break
            kind = _tag(batch.rerun[i])
            matched = batch.matches(i)
            # An event that differs in a batch that drew from a sealed seed waits for that seed even
            # when the stand-ins left it unchanged: a few stand-ins cannot tell a small draw (one
            # seat of four) from a rewrite, and the check runs in full once the round reveals it.
            sealed_draw = not matched and i not in batch.chance and bool(batch.pending)
            if i in batch.chance or sealed_draw:
                drawn_from = batch.chance[i] if i in batch.chance else max(batch.pending)
                pending = sealed_draw or batch.is_pending(i)
                report.round(drawn_from).chance.append(
                    ChanceOutcome(item.version, drawn_from, kind, matched and not pending)
                )
                report.passed(drawn_from, CHANCE, 0)
                if pending:
                    report.fail(
                        drawn_from,
                        CHANCE,
                        f"version {item.version}: the recorded {kind} cannot be re-derived: "
                        f"round {drawn_from}'s seed is never revealed",
                    )
                elif not matched:
                    report.fail(
                        drawn_from,
                        CHANCE,
                        f"version {item.version}: the recorded {kind} is not what round "
                        f"{drawn_from}'s seed draws",
                    )
            elif not matched:
                clean = False
                report.fail(
                    batch.event_round(i),
                    RERUN,
                    f"version {item.version}: the stored event is not the {kind} "
                    f"the rules produce for {what}",
                )
        if clean and len(batch.rerun) == len(batch.items):
            report.passed(batch.round, RERUN)


def _later_seeds(doc: dict[str, Any]) -> dict[int, bytes]:
    """A cut export's seeds revealed after the cut (``services.history.cut``): only the well-formed
    ones draw; each is checked against its chain's commitment (``_check_later_seeds``)."""
    raw = doc.get("later_seeds") if "cut" in doc else None
    if not isinstance(raw, dict):
        return {}
    return {
        int(key): bytes.fromhex(value)
        for key, value in raw.items()
        if isinstance(key, str) and key.isdigit() and isinstance(value, str) and HEX64.fullmatch(value)
    }


def _check_later_seeds(report: Report, rp: Replay, later: dict[int, bytes]) -> None:
    for r, seed in sorted(later.items()):
        if r in rp.revealed:
            report.fail(r, SEED_CHAIN, f"round {r}'s seed is revealed in the stream; it is not a later seed")
            continue
        chain, index = chain_position(r)
        commitment = rp.commitments.get(chain)
        if commitment is None or not verify_reveal(seed, index, commitment):
            report.fail(r, SEED_CHAIN, f"round {r}'s later seed does not hash to chain {chain}'s commitment")
        else:
            report.passed(r, SEED_CHAIN)
            report.round(r).seed = seed.hex()


def _check_cut(report: Report, rp: Replay, doc: dict[str, Any]) -> None:
    """A cut export (a dispute bundle's): it ends with the batch that revealed the cut round's
    seed, and its ``scores`` are the rules' scores of the state at the cut."""
    cut = doc.get("cut")
    last = max(report.rounds)
    if not isinstance(cut, dict) or not isinstance(cut.get("round"), int):
        report.fail(last, HEADER, "the cut names no round")
        return
    number = cut["round"]
    head = rp.items[-1].version if rp.items else 0
    if cut.get("version") != head:
        report.fail(last, HEADER, f"the cut says version {cut.get('version')!r}, the history ends at {head}")
    last_batch = rp.batches[-1] if rp.batches else None
    if (
        number not in rp.revealed
        or last_batch is None
        or not any(
            isinstance(item.event, SeedRevealed) and item.event.round == number for item in last_batch.items
        )
    ):
        report.fail(
            number,
            SEED_CHAIN,
            f"the cut does not end with the batch that reveals round {number}'s seed",
        )
    if "scores" in doc or "winners" in doc or "closed" in doc:
        report.fail(last, HEADER, "a cut export states no final result")
    if rp.final is None or rp.table is None or rp.final.status == "waiting":
        report.fail(last, SCORES, "the state at the cut cannot be rebuilt")
        return
    scores = list(rp.table.rules.scores(rp.final.game_state))
    if cut.get("scores") != scores:
        report.fail(
            number, SCORES, f"the cut states scores {cut.get('scores')!r}, the rules give {scores} at the cut"
        )
    else:
        report.passed(number, SCORES)


def _check_seeds(report: Report, rp: Replay, doc: dict[str, Any]) -> None:
    """Each reveal against its chain's commitment, in order, once; fresh chains numbered in turn."""
    revealed: set[int] = set()
    chains = 1
    for item, batch, i in rp.events():
        event, v = item.event, item.version
        if isinstance(event, SeedChainCommitted):
            if event.chain != chains or event.first_round != event.chain * CHAIN_LENGTH + 1:
                report.fail(
                    batch.event_round(i), SEED_CHAIN, f"version {v}: chain {event.chain} is out of turn"
                )
            chains += 1
        if not isinstance(event, SeedRevealed):
            continue
        r = event.round
        if r < 1 or r in revealed or r != len(revealed) + 1:
            report.fail(max(r, SETUP), SEED_CHAIN, f"version {v}: round {r}'s seed is revealed out of turn")
            continue
        revealed.add(r)
        report.round(r).seed = event.seed
        chain, index = chain_position(r)
        commitment = rp.commitments.get(chain)
        if not HEX64.fullmatch(event.seed):
            report.fail(r, SEED_CHAIN, f"version {v}: the revealed seed is not 32 bytes of hex")
        elif commitment is None:
            report.fail(r, SEED_CHAIN, f"version {v}: chain {chain} has no commitment")
        elif not verify_reveal(bytes.fromhex(event.seed), index, commitment):
            report.fail(
                r,
                SEED_CHAIN,
                f"version {v}: the seed does not hash to chain {chain}'s commitment "
                f"(SHA-256 applied {index} times must give s_0 = {commitment[:12]}…)",
            )
        else:
            report.passed(r, SEED_CHAIN)
    if "cut" in doc:
        cut = doc.get("cut")
        upto = cut.get("round") if isinstance(cut, dict) else None
        for r in range(1, upto + 1 if isinstance(upto, int) else 1):
            if r not in revealed:
                report.fail(r, SEED_CHAIN, f"round {r} is before the cut but its seed is never revealed")
    elif rp.finished or _closed(rp):
        played = max((number for number in report.rounds if number != SETUP), default=0)
        for r in range(1, played + 1):
            if r not in revealed:
                report.fail(r, SEED_CHAIN, f"round {r} is over but its seed is never revealed")


def _check_result(report: Report, rp: Replay, doc: dict[str, Any]) -> None:
    """``game_finished`` against the rules' ``scores``/``winners`` of the final state, and the header."""
    last = max(report.rounds)
    closed = _closed(rp)
    if closed is not None:  # an operator closed the table: a valid ending without a result
        if doc.get("closed") != {"reason": closed.reason, "operator": closed.operator}:
            report.fail(last, HEADER, f"closed {doc.get('closed')!r} differs from the stream's table_closed")
        elif "scores" in doc or "winners" in doc:
            report.fail(last, HEADER, "a closed table has no scores or winners")
        else:
            report.passed(last, SCORES)
        return
    finished = final_result(rp)
    if finished is None or rp.final is None or not rp.finished or rp.table is None:
        report.fail(last, SCORES, "the game is not finished: the stream has no game_finished")
        return
    rules, game_state = rp.table.rules, rp.final.game_state
    scores, winners = list(rules.scores(game_state)), list(rules.winners(game_state))
    if (finished.scores, finished.winners) != (scores, winners):
        report.fail(
            last,
            SCORES,
            f"game_finished says scores {finished.scores} winners {finished.winners}, "
            f"the rules give {scores} winners {winners}",
        )
    else:
        report.passed(last, SCORES)
    for key, value in (("scores", finished.scores), ("winners", finished.winners)):
        if doc.get(key) != value:
            report.fail(last, HEADER, f"{key} {doc.get(key)!r} differ from game_finished's {value}")


def _closed(rp: Replay) -> TableClosed | None:
    """The stream's ``table_closed``, when the re-run ended there (an operator closed the table)."""
    if rp.final is None or rp.final.status != "closed":
        return None
    return next((item.event for item in reversed(rp.items) if isinstance(item.event, TableClosed)), None)


def _check_header(
    report: Report, rp: Replay, doc: dict[str, Any], entries: Sequence[Entry], rounds: Sequence[int]
) -> None:
    """The header's copies of stream facts must be those facts: a reader may rely on them."""
    created = rp.created
    assert created is not None
    facts = table_facts(created, (item.event for item in rp.items))
    for key, value in facts.items():
        if doc.get(key) != value:
            report.fail(SETUP, HEADER, f"{key} {doc.get(key)!r} is not the stream's {value!r}")
        else:
            report.passed(SETUP, HEADER)
    commitments = [rp.commitments[c] for c in sorted(rp.commitments)]
    if doc.get("commitments") != commitments:
        report.fail(
            SETUP,
            SEED_CHAIN,
            "the export's commitments are not table_created's and the chains' in the stream",
        )
    stream_seeds = {str(r): seed.hex() for r, seed in rp.revealed.items()}
    listed = doc.get("revealed_seeds")
    listed = listed if isinstance(listed, dict) else {}
    for key in sorted(set(stream_seeds) | set(listed), key=lambda k: (len(k), k)):
        number = int(key) if key.isdigit() else SETUP
        if listed.get(key) != stream_seeds.get(key):
            report.fail(
                number,
                HEADER,
                f"the export lists seed {listed.get(key)!r}, the stream reveals {stream_seeds.get(key)!r}",
            )
    head = doc.get("head")
    if head != {"version": entries[-1].version, "hash": entries[-1].hash}:
        report.fail(rounds[-1], HEADER, f"head {head!r} is not the last entry's version and hash")


def _tag(event: Any) -> str:
    return str(type(event).__struct_config__.tag)
