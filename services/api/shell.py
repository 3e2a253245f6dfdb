"""The page shell (``static/index.html``) as served: its asset URLs under the tree's current
version, and the preloads that remove the module waterfall.

Without them the browser finds the modules one level at a time: the shell names ``app.js``, which
names ``i18n.js``, whose fetch names the language file, while the router's ``import()`` of the page
module waits for ``app.js`` to run, and the page module's own imports for that. The shell therefore
declares ``<link rel="modulepreload">`` for every module the first page runs before it draws:
``app.js``'s static imports, transitively, plus the page module the client router picks for the
path (``Snapshot.page_module``) and its imports; on a table or a replay whose game this process
holds in memory, the game's module too (``js/games/<game>.js``). All are computed from the files
(``services.api.assets``), never listed by hand. The language file the page will fetch is
preloaded (``as="fetch" crossorigin``, the way ``i18n.js`` fetches it): the ``tablestream.lang``
cookie the client sets, else the browser's ``Accept-Language``, else English. And the data a page
module fetches at once and that is the same for everyone (``DATA``) is preloaded beside it.

A path no route serves gets the same shell with status 404: the client router shows its page
for a person (``js/not_found.js``, in the person's language), with a plain fallback in ``<main>``
for a browser without scripts.
"""

from __future__ import annotations

import gzip
import hashlib
import html
from collections.abc import Iterable
from dataclasses import dataclass

from domain.games import is_game, spec
from services.api.assets import ENTRY_MODULE, LANG_DIR, AssetTree, Snapshot

SHELL = "index.html"
NOT_FOUND_MODULE = "js/not_found.js"  # what the client router loads for a path it has no route for
LANG_COOKIE = "tablestream.lang"
DEFAULT_LANG = "en"
DATA = {"js/lobby.js": ("/games/options",)}  # what a page module fetches at once, the same for all
MAX_KEPT = 256  # rendered variants kept (path kinds x games x languages: a few dozen in practice)
LOADING = '<p class="loading">…</p>'
NOT_FOUND_FALLBACK = '<h1>Page not found</h1><p><a href="/">Back to the lobby</a></p>'


@dataclass(frozen=True, slots=True)
class Page:
    body: bytes
    gzipped: bytes
    etag: str


def game_module(game: str) -> str:
    """The client's board module for a game: ``js/games/<package>.js`` of its spec (the client's
    ``game_board.js`` imports it by the same convention); a game without one is left out of the
    preloads, as any module not in the tree."""
    return f"js/games/{spec(game).package}.js"


def languages_of(snapshot: Snapshot) -> list[str]:
    prefix = f"{LANG_DIR}/"
    return [name[len(prefix) : -len(".json")] for name in snapshot.files if name.startswith(prefix)]


def preferred_language(cookie: str | None, accept_language: str | None, available: Iterable[str]) -> str:
    """The language the client will choose: its saved choice (the cookie), else the first of the
    browser's languages we have (by quality, then order), else English."""
    known = set(available)
    if cookie and cookie in known:
        return cookie
    ranked: list[tuple[float, int, str]] = []
    for order, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if tag and quality > 0:
            ranked.append((-quality, order, tag.strip()[:2].lower()))
    for _, _, base in sorted(ranked):
        if base in known:
            return base
    return DEFAULT_LANG


def preloads(snapshot: Snapshot, path: str, game: str | None, missing: bool) -> list[str]:
    """The tree paths of the modules to preload for a page at ``path``: the entry module's imports
    first (the entry itself aside: the shell's script tag names it), then the page's module, its
    game's and theirs (a module that is not in the tree is left out)."""
    page = NOT_FOUND_MODULE if missing else snapshot.page_module(path)
    pages = [*([page] if page else []), *([game_module(game)] if game and is_game(game) and page else [])]
    modules = dict.fromkeys([*snapshot.closure([ENTRY_MODULE]), *snapshot.closure(pages)])
    modules.pop(ENTRY_MODULE, None)
    return list(modules)


class Shell:
    """Renders the shell for a path, a game and a language, keeping each variant once rendered
    (and gzipped) for the tree's current version."""

    def __init__(self, tree: AssetTree) -> None:
        self.tree = tree
        self._kept: dict[tuple[str, tuple[str, ...], bool], Page] = {}
        self._version = ""

    def page(self, path: str, lang: str, game: str | None = None, missing: bool = False) -> Page:
        snapshot = self.tree.current()
        if snapshot.version != self._version or len(self._kept) >= MAX_KEPT:
            self._kept.clear()
            self._version = snapshot.version
        modules = tuple(preloads(snapshot, path, game, missing))
        data = () if missing else DATA.get(snapshot.page_module(path) or "", ())
        key = (lang, modules, missing)
        page = self._kept.get(key)
        if page is None:
            page = self._kept[key] = self._render(snapshot, modules, data, lang, missing)
        return page

    def language(self, cookie: str | None, accept_language: str | None) -> str:
        return preferred_language(cookie, accept_language, languages_of(self.tree.current()))

    @staticmethod
    def _render(
        snapshot: Snapshot, modules: tuple[str, ...], data: tuple[str, ...], lang: str, missing: bool
    ) -> Page:
        prefix = snapshot.prefix
        text = snapshot.files[SHELL].body.decode("utf-8").replace('"/static/', f'"{prefix}/')
        links = [f'<link rel="modulepreload" href="{prefix}/{html.escape(m)}">' for m in modules]
        language_file = f"{LANG_DIR}/{lang}.json"
        if language_file in snapshot.files:
            links.append(f'<link rel="preload" as="fetch" href="{prefix}/{language_file}" crossorigin>')
        links += [f'<link rel="preload" as="fetch" href="{url}" crossorigin>' for url in data]
        text = text.replace("</head>", "".join(f"  {link}\n" for link in links) + "</head>", 1)
        if missing:
            text = text.replace(LOADING, NOT_FOUND_FALLBACK, 1)
        body = text.encode("utf-8")
        etag = f'"{hashlib.sha256(body).hexdigest()[:24]}"'
        return Page(body, gzip.compress(body, compresslevel=9, mtime=0), etag)
