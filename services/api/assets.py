"""The web client's files as the server holds them: read once, fingerprinted, pre-compressed, and
their module graph.

There is no build step, so the fingerprint is a hash of the whole tree (``services/api/static`` and
the glossary's languages, served as ``lang/<lang>.json``: each the merge of the common glossary file
and every registered game's own, ``projections.words``): every file is served under
``/static/<version>/...`` with a year of immutable caching, and the JavaScript modules, which import
each other relatively, all resolve under the same prefix, so a page never mixes two versions of
the module graph. Any change of any file changes the version.

A ``Snapshot`` holds every file's bytes, its gzip (level 9, once, for text files large enough to
gain), its ETag and type, and the static imports of each module (``import ... from "./x.js"``,
``export ... from``, ``import "./x.js"``) and the client router's table of page modules (the
``[/regex/, () => import("./page.js")]`` entries of ``js/app.js``), from which the page shell
lists what to preload (``services.api.shell``). ``AssetTree`` looks at the files' sizes and
modification times at most every ``recheck_seconds`` and builds a new snapshot when they changed,
so an edited file is served under a new version without a restart.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import mimetypes
import os
import posixpath
import re
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from projections.words import glossary_dirs, glossary_files, merge

STATIC_DIR = Path(__file__).resolve().parent / "static"
LANG_DIR = "lang"  # the glossary's languages appear under this folder of the tree
ENTRY_MODULE = "js/app.js"
VERSION_LENGTH = 16  # hex characters of the tree's SHA-256
VERSION = re.compile(f"[0-9a-f]{{{VERSION_LENGTH}}}")

COMPRESSIBLE = {".js", ".css", ".html", ".json", ".svg", ".txt"}
MIN_COMPRESSED = 256  # bytes: below this gzip's own header eats the gain
TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
}

# A static import or re-export: `import x from "./a.js"`, `import { a,\n b } from "../b.js"`,
# `export * from "./c.js"`, `import "./d.js"`. Not `import("./e.js")` (dynamic: a page, loaded when
# routed to). Specifiers that are not relative (none today) are left to the browser.
STATIC_IMPORT = re.compile(
    r"""^[ \t]*(?:import|export)\s*(?:[^;'"()]*?\bfrom\s*)?["'](\.\.?/[^"']+)["']""", re.M
)
# One entry of the router's table in js/app.js:
# `[/^\/tables\/([A-Za-z0-9_-]+)$/, () => import("./table.js")]`.
ROUTE = re.compile(
    r"""\[\s*/((?:\\.|[^/\\\n])+)/[a-z]*\s*,\s*\(\)\s*=>\s*import\(\s*["'](\.\.?/[^"']+)["']\s*\)\s*\]"""
)


@dataclass(frozen=True, slots=True)
class Asset:
    body: bytes
    gzipped: bytes | None  # None: not worth compressing
    media_type: str
    etag: str  # quoted; the gzip variant's is this with "-gz" inside the quotes

    @property
    def gzip_etag(self) -> str:
        return self.etag[:-1] + '-gz"'


def make_asset(body: bytes, media_type: str, compressible: bool) -> Asset:
    packed = None
    if compressible and len(body) >= MIN_COMPRESSED:
        packed = gzip.compress(body, compresslevel=9, mtime=0)
        if len(packed) >= len(body):
            packed = None
    return Asset(body, packed, media_type, f'"{hashlib.sha256(body).hexdigest()[:24]}"')


def media_type_of(name: str) -> str:
    suffix = posixpath.splitext(name)[1].lower()
    return TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"


@dataclass(frozen=True)
class Snapshot:
    """The tree at one moment: ``version``, every file by its path in the tree (``js/app.js``,
    ``lang/en.json``), each module's static imports, and the router's page modules."""

    version: str
    files: dict[str, Asset]
    imports: dict[str, tuple[str, ...]] = field(default_factory=dict)
    routes: tuple[tuple[re.Pattern[str], str], ...] = ()

    @property
    def prefix(self) -> str:
        return f"/static/{self.version}"

    def closure(self, roots: Iterable[str]) -> list[str]:
        """The modules ``roots`` load before running: themselves and their static imports,
        transitively, each once, breadth first (the order a browser discovers them)."""
        seen: dict[str, None] = {}
        queue = [root for root in roots if root in self.files]
        while queue:
            module = queue.pop(0)
            if module in seen:
                continue
            seen[module] = None
            queue += [m for m in self.imports.get(module, ()) if m not in seen and m in self.files]
        return list(seen)

    def page_module(self, path: str) -> str | None:
        """The page module the client router loads for ``path`` (``None``: no route, its 404)."""
        for pattern, module in self.routes:
            if pattern.search(path):
                return module
        return None


def static_imports(module: str, source: str) -> tuple[str, ...]:
    """The tree paths ``module`` imports statically (``js/lobby.js`` -> ``js/api.js``, ...)."""
    base = posixpath.dirname(module)
    found = (posixpath.normpath(posixpath.join(base, spec)) for spec in STATIC_IMPORT.findall(source))
    return tuple(dict.fromkeys(found))


def router_table(module: str, source: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    """The client router's entries: each path pattern (JavaScript's, which these simple patterns
    share with Python once ``\\/`` is unescaped) and the tree path of the page module it imports."""
    base = posixpath.dirname(module)
    routes = []
    for pattern, spec in ROUTE.findall(source):
        try:
            compiled = re.compile(pattern.replace("\\/", "/"))
        except re.error:
            continue  # a pattern Python cannot read: that page is simply not preloaded
        routes.append((compiled, posixpath.normpath(posixpath.join(base, spec))))
    return tuple(routes)


def _glossary(paths: list[Path]) -> bytes:
    """One language's glossary as served: its files merged (``projections.words.merge``), written as
    the files are (one space of indent, UTF-8)."""
    merged = merge(paths)
    return (json.dumps(merged, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def _walk(root: Path, under: str = "") -> Iterable[tuple[str, Path]]:
    """(tree path, file) of every file under ``root``, dot files skipped."""
    if not root.is_dir():
        return
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = Path(directory) / name
            relative = path.relative_to(root).as_posix()
            yield (f"{under}/{relative}" if under else relative), path


class AssetTree:
    """The current ``Snapshot`` of ``static_dir`` and the glossary (``lang/<lang>.json`` for each
    ``<lang>.json`` of the first glossary folder: that file merged with the same language's file in
    each other folder), rebuilt when a file's size or modification time changes (looked at no more
    often than every ``recheck_seconds``; 0: on every call).

    ``glossary_dir``: one folder, or the folders in merge order; ``None``: the server's glossary, the
    common folder and each registered game's (``projections.words.glossary_dirs``, asked again at
    each look, so a game registered later is served too). A key in two files is a ``ValueError``.
    """

    def __init__(
        self,
        static_dir: Path = STATIC_DIR,
        glossary_dir: Path | Sequence[Path] | None = None,
        recheck_seconds: float = 1.0,
    ) -> None:
        self.static_dir = static_dir
        self.glossary_dir = [glossary_dir] if isinstance(glossary_dir, Path) else glossary_dir
        self.recheck_seconds = recheck_seconds
        self._lock = threading.Lock()
        self._signature: tuple[tuple[str, int, int], ...] = ()
        self._checked = 0.0
        self._snapshot = self._build(self._files())

    def current(self) -> Snapshot:
        now = time.monotonic()
        if now - self._checked < self.recheck_seconds:
            return self._snapshot
        with self._lock:
            self._checked = now
            files = self._files()
            signature = self._signature_of(files)
            if signature != self._signature:
                self._snapshot = self._build(files)
            return self._snapshot

    def _files(self) -> list[tuple[str, Path]]:
        """Every file of the tree by its path in it; a language's glossary files all under its name."""
        files = list(_walk(self.static_dir))
        dirs = glossary_dirs() if self.glossary_dir is None else list(self.glossary_dir)
        if dirs and dirs[0].is_dir():
            for first in sorted(dirs[0].glob("*.json")):
                files += [(f"{LANG_DIR}/{first.name}", p) for p in glossary_files(first.stem, dirs)]
        return files

    @staticmethod
    def _signature_of(files: list[tuple[str, Path]]) -> tuple[tuple[str, int, int], ...]:
        signature = []
        for name, path in files:
            try:
                stat = path.stat()
            except FileNotFoundError:  # removed meanwhile: the next look sees it gone
                continue
            signature.append((name, stat.st_size, stat.st_mtime_ns))
        return tuple(signature)

    def _build(self, files: list[tuple[str, Path]]) -> Snapshot:
        self._signature = self._signature_of(files)
        digest = hashlib.sha256()
        assets: dict[str, Asset] = {}
        imports: dict[str, tuple[str, ...]] = {}
        routes: tuple[tuple[re.Pattern[str], str], ...] = ()
        by_name: dict[str, list[Path]] = {}
        for name, path in files:
            by_name.setdefault(name, []).append(path)
        for name, paths in by_name.items():
            try:
                body = _glossary(paths) if name.startswith(f"{LANG_DIR}/") else paths[0].read_bytes()
            except FileNotFoundError:
                continue
            digest.update(f"{name}\0{len(body)}\0".encode())
            digest.update(body)
            suffix = posixpath.splitext(name)[1].lower()
            assets[name] = make_asset(body, media_type_of(name), suffix in COMPRESSIBLE)
            if suffix == ".js":
                source = body.decode("utf-8", errors="replace")
                imports[name] = static_imports(name, source)
                if name == ENTRY_MODULE:
                    routes = router_table(name, source)
        return Snapshot(digest.hexdigest()[:VERSION_LENGTH], assets, imports, routes)
