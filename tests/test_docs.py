"""The repository's documentation stands alone: no file points outside it for a document.

The team's first reference texts lived beside the repository (``shared/...``), where a clone does not
have them; everything they said that still holds is in ``docs/`` now. So no file of the repository
names a ``shared/`` path, every ``something.md`` a file mentions exists in the repository, every
relative markdown link leads to a file that exists, and every section a reference names in quotes
(``docs/fairness.md "Transparency log"``) is a heading of that document.
"""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
SELF = PurePosixPath("tests/test_docs.py")
SKIPPED_DIRS = {
    ".git",
    ".venv",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".ruff_cache",
    ".mypy_cache",
    "build",
    "var",
}

SHARED = re.compile(r"(?<![\w.~-])(?:\.\./)*shared/")
# a file name ending in .md, with its directories, not inside a URL or a longer path
MENTION = re.compile(r"(?<![\w/.:-])((?:\.{1,2}/)*(?:[\w-]+/)*[\w-]+\.md)\b")
# [text](target) and ![alt](target), the target up to a space or the closing parenthesis
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
# docs/x.md "Section", docs/x.md, "Section", docs/x.md ("Section"), docs/x.md section "Section"
SECTION = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.md)\)?,? (?:\(|section |sections )?\"([^\"\n]+)\"")


@cache
def repository_files() -> tuple[PurePosixPath, ...]:
    """Every file of the working tree that git keeps or would keep (tracked, or new and not ignored)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
        names = [PurePosixPath(name) for name in listed.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: walk it
        names = [
            PurePosixPath(path.relative_to(ROOT).as_posix())
            for path in ROOT.rglob("*")
            if path.is_file()
            and not SKIPPED_DIRS & set(path.relative_to(ROOT).parts)
            and not any(part.endswith(".egg-info") for part in path.parts)
        ]
    return tuple(sorted(name for name in names if (ROOT / name).is_file()))


@cache
def known_paths() -> frozenset[str]:
    """The repository's files and the directories holding them, as relative POSIX paths."""
    paths: set[str] = set()
    for name in repository_files():
        paths.add(str(name))
        paths.update(str(parent) for parent in name.parents if str(parent) != ".")
    return frozenset(paths)


@cache
def texts() -> tuple[tuple[PurePosixPath, str], ...]:
    """Every text file of the repository but this one, with its text."""
    found = []
    for name in repository_files():
        if name == SELF:
            continue
        try:
            found.append((name, (ROOT / name).read_text(encoding="utf-8")))
        except UnicodeDecodeError:  # images and other binary files name no documents
            continue
    return tuple(found)


def resolve(where: PurePosixPath, target: str) -> str | None:
    """``target`` as named in the file ``where``: relative to that file's directory, else to the
    repository's root, else (a bare file name) to ``docs/``; ``None`` when none of them exists."""
    candidates = [where.parent / target, PurePosixPath(target)]
    if "/" not in target:
        candidates.append(PurePosixPath("docs") / target)
    for candidate in candidates:
        normal = _normalise(candidate)
        if normal is not None and normal in known_paths():
            return normal
    return None


def _normalise(path: PurePosixPath) -> str | None:
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return "/".join(parts)


def line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


@cache
def headings(document: str) -> frozenset[str]:
    """The section titles of a markdown document, without their ``#`` marks and backquotes."""
    text = (ROOT / document).read_text(encoding="utf-8")
    return frozenset(
        line.lstrip("#").strip().replace("`", "") for line in text.splitlines() if re.match(r"#{1,6} ", line)
    )


def names_section(title: str, section: str) -> bool:
    """Whether a reference to ``section`` names the heading ``title``: the whole of it, or its start
    up to a word's end (``"Retention"`` names "Retention, names and the schema")."""
    return title == section or (title.startswith(section) and not title[len(section)].isalnum())


def test_no_file_of_the_repository_names_a_path_under_shared() -> None:
    found = [
        f"{name}:{line_of(text, match.start())}" for name, text in texts() for match in SHARED.finditer(text)
    ]
    assert found == [], "these name the reference texts outside the repository; cite docs/ instead"


def test_every_markdown_file_a_file_mentions_exists_in_the_repository() -> None:
    missing = [
        f"{name}:{line_of(text, match.start())}: {match.group(1)}"
        for name, text in texts()
        for match in MENTION.finditer(text)
        if resolve(name, match.group(1)) is None
    ]
    assert missing == []


def test_every_relative_link_of_the_markdown_files_leads_to_a_file_of_the_repository() -> None:
    broken = []
    for name, text in texts():
        if name.suffix != ".md":
            continue
        for match in LINK.finditer(text):
            target = match.group(1).strip("<>")
            if SCHEME.match(target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0].split("?", 1)[0]
            if path.startswith("/"):
                path = path.lstrip("/")
                found = _normalise(PurePosixPath(path)) in known_paths()
            else:
                found = resolve(name, path) is not None
            if not found:
                broken.append(f"{name}:{line_of(text, match.start())}: {target}")
    assert broken == []


def test_every_section_a_reference_names_is_a_heading_of_that_document() -> None:
    unknown = []
    for name, text in texts():
        for match in SECTION.finditer(text):
            document = resolve(name, match.group(1))
            if document is None or not document.endswith(".md"):
                continue  # a missing document is the test above's
            section = match.group(2).replace("`", "")
            if not any(names_section(title, section) for title in headings(document)):
                unknown.append(f'{name}:{line_of(text, match.start())}: {document} "{section}"')
    assert unknown == []


def test_the_checks_catch_what_they_are_for() -> None:
    """The patterns themselves: a path under shared/, a missing document, a URL left alone."""
    assert SHARED.search("see ../shared/FAIRNESS.md") and SHARED.search("(shared/RULES.md, Skull)")
    assert not SHARED.search("~/.local/share/tablestream") and not SHARED.search("unshared/x")
    assert [m.group(1) for m in MENTION.finditer("RULES.md, docs/api.md and https://c2sp.org/a.md")] == [
        "RULES.md",
        "docs/api.md",
    ]
    here = PurePosixPath("docs/fairness.md")
    assert resolve(here, "api.md") == "docs/api.md" and resolve(here, "../README.md") == "README.md"
    assert resolve(here, "RULES.md") is None and resolve(here, "../shared/FAIRNESS.md") is None
    assert [
        m.group(2) for m in SECTION.finditer('docs/fairness.md "Seeds" and (docs/api.md, "Quick play")')
    ] == [
        "Seeds",
        "Quick play",
    ]
