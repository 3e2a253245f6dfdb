"""The newest checkpoint the log has published, remembered outside Redis, so that the log never
contradicts itself (C2SP tlog-checkpoint: a log MUST NOT sign a checkpoint inconsistent with one it
signed before).

Redis holds the log's leaves and checkpoints. Restored from a snapshot older than the last
checkpoint, it holds a shorter tree; the appender then logs the restored games' heads again, in the
order it meets them, and the next checkpoint at the old size would have another root: a fork, which
every witness that saw the old checkpoint reports. So the publisher keeps each checkpoint it signs
in a file outside Redis (in ``Settings.log_published_directory``: beside the archive, the volume
several worker pools share; one file per log, ``PublishedCheckpoint.of``) and, before signing a new
one, checks that the tree extends it: not smaller, and the same root at its size. When it does not,
it signs nothing and says why and how to recover (``LogContradiction``; docs/operations.md, "The
public log after a restore").
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from services.fairness.signing import KeyRing, NoteError, parse_note
from services.fairness.transparency.checkpoint import Checkpoint, CheckpointError, parse_text

RECOVERY = (
    "Restore the public log from a backup that holds that checkpoint (tablestream import-all FILE "
    "adds the leaves the store lacks), then start the workers again; docs/operations.md, "
    '"The public log after a restore".'
)


class LogContradiction(RuntimeError):
    """The tree in Redis does not extend the newest checkpoint the log published: signing a checkpoint
    of it would contradict that one."""


@dataclass(frozen=True)
class PublishedCheckpoint:
    """The file that keeps the newest checkpoint the log published (its whole signed note)."""

    path: Path

    @classmethod
    def of(cls, directory: Path, ring: KeyRing) -> PublishedCheckpoint:
        """The file of the log whose key ring is ``ring``, in ``directory``: named by the ring's first
        key, which a restore brings back with the ring (``import-all`` merges rings keeping every key),
        so that two stores (a test's, a staging one) sharing a directory never share a file."""
        return cls(directory / f"log-published-{ring.keys[0].public.key_id}")

    def newest(self) -> Checkpoint | None:
        """The kept checkpoint, ``None`` before the first; ``LogContradiction`` when the file cannot
        be read as one (a refusal, not a guess: the operator looks at it)."""
        try:
            note = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            return parse_text(parse_note(note)[0])
        except (NoteError, CheckpointError) as error:
            raise LogContradiction(
                f"The newest published checkpoint kept in {self.path} cannot be read ({error}); the log "
                "signs nothing until it can. Put back the file, or the note of the latest checkpoint "
                "(GET /log/checkpoint, or a witness's), in its place."
            ) from None

    def check(self, size: int, root: Callable[[int], bytes]) -> None:
        """Raise ``LogContradiction`` unless a tree of ``size`` leaves (``root``: its root at a size)
        extends the kept checkpoint."""
        kept = self.newest()
        if kept is None:
            return
        said = (
            f"it published a checkpoint of {kept.size} leaves (root {base64.b64encode(kept.root).decode()})"
        )
        if size < kept.size:
            raise LogContradiction(
                f"The public log holds {size} leaves, but {said} before, kept in {self.path}: the store was "
                f"restored from an older snapshot. {RECOVERY}"
            )
        if root(kept.size) != kept.root:
            raise LogContradiction(
                f"The public log's first {kept.size} leaves are not those of the checkpoint: {said} before "
                f"(kept in {self.path}), and they were logged again in another order after a restore from "
                f"an older snapshot. Signing would show every witness a fork. {RECOVERY}"
            )

    def keep(self, note: str) -> None:
        """Keep ``note``, a checkpoint just published, unless the kept one is larger; written to a
        temporary file, flushed and renamed over the old one, so a crash leaves one or the other."""
        size = parse_text(parse_note(note)[0]).size
        kept = self.newest()
        if kept is not None and kept.size > size:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + ".tmp")
        with open(temporary, "w", encoding="utf-8") as out:
            out.write(note)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self.path)
