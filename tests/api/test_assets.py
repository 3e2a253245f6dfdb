"""The web client's files as the server holds them: fingerprint, module graph, the shell's preloads
(``services.api.assets``, ``services.api.shell``), on a tree of our own and on the real one."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from services.api.assets import ENTRY_MODULE, STATIC_DIR, AssetTree, static_imports
from services.api.shell import (
    DATA,
    NOT_FOUND_MODULE,
    Shell,
    game_module,
    preferred_language,
    preloads,
)

APP = """import { a } from "./a.js";
import "./side.js";
const ROUTES = [
  [/^\\/$/, () => import("./home.js")],
  [/^\\/things\\/([a-z]+)$/, () => import("./things/page.js")],
];
const NOT_FOUND = () => import("./not_found.js");
"""
FILES = {
    "index.html": '<!doctype html><html><head><link rel="stylesheet" href="/static/css/x.css">'
    '<script type="module" src="/static/js/app.js"></script></head>'
    '<body><main id="main"><p class="loading">…</p></main></body></html>',
    "css/x.css": "body { color: black; }\n" * 40,
    "js/app.js": APP,
    "js/a.js": 'export { b } from "./b.js";\nexport const a = 1;\n',
    "js/b.js": 'import { a } from "./a.js"; // a cycle\nexport const b = 2;\n',
    "js/side.js": "document.title = 'x';\n",
    "js/home.js": 'import {\n  c,\n  d } from "./lib/c.js";\n'
    'export function render() { return import("./later.js"); }\n',
    "js/lib/c.js": 'import { a } from "../a.js";\nexport const c = 3, d = 4;\n',
    "js/later.js": "export const later = true;\n",
    "js/things/page.js": 'import { b } from "../b.js";\nexport const page = 1;\n',
    "js/not_found.js": 'import { c } from "./lib/c.js";\nexport const nf = 1;\n',
    "js/games/six_nimmt.js": 'import { a } from "../a.js";\nexport const g = 1;\n',
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture
def tree(tmp_path: Path) -> AssetTree:
    static = write_tree(tmp_path / "static", FILES)
    glossary = write_tree(tmp_path / "glossary", {"en.json": '{"a": "b"}', "pl.json": '{"a": "c"}'})
    return AssetTree(static, glossary, recheck_seconds=0)


def test_static_imports_are_every_form_of_import_and_re_export_but_not_dynamic_import() -> None:
    source = FILES["js/home.js"] + FILES["js/app.js"] + 'export * from "./star.js";\n'
    assert static_imports("js/home.js", source) == ("js/lib/c.js", "js/a.js", "js/side.js", "js/star.js")
    assert static_imports("js/lib/c.js", FILES["js/lib/c.js"]) == ("js/a.js",)


def test_the_closure_follows_imports_transitively_through_cycles_each_module_once(tree: AssetTree) -> None:
    snapshot = tree.current()
    assert snapshot.closure(["js/home.js"]) == ["js/home.js", "js/lib/c.js", "js/a.js", "js/b.js"]


def test_the_router_table_is_read_from_app_js(tree: AssetTree) -> None:
    snapshot = tree.current()
    assert snapshot.page_module("/") == "js/home.js"
    assert snapshot.page_module("/things/abc") == "js/things/page.js"
    assert snapshot.page_module("/nothing/here") is None


def test_the_preloads_are_the_entry_imports_then_the_page_module_and_its_imports(tree: AssetTree) -> None:
    snapshot = tree.current()
    assert preloads(snapshot, "/", None, missing=False) == [
        "js/a.js",
        "js/side.js",
        "js/b.js",
        "js/home.js",
        "js/lib/c.js",
    ]
    assert preloads(snapshot, "/things/x", None, missing=False)[-1] == "js/things/page.js"
    assert "js/later.js" not in preloads(snapshot, "/", None, missing=False)  # dynamic: loaded on use
    assert preloads(snapshot, "/nowhere", None, missing=True)[-2:] == ["js/not_found.js", "js/lib/c.js"]
    with_game = preloads(snapshot, "/things/x", "six-nimmt", missing=False)
    assert with_game[-1] == "js/games/six_nimmt.js"
    assert "js/games/skull.js" not in preloads(snapshot, "/things/x", "skull", missing=False)  # no such file


def test_every_file_is_fingerprinted_together_and_any_change_changes_the_version(
    tree: AssetTree, tmp_path: Path
) -> None:
    before = tree.current()
    assert re.fullmatch("[0-9a-f]{16}", before.version)
    assert set(before.files) == set(FILES) | {"lang/en.json", "lang/pl.json"}
    (tmp_path / "static" / "js" / "b.js").write_text("export const b = 3; // changed\n")
    changed = tree.current()
    assert changed.version != before.version and changed.files["js/b.js"].body.endswith(b"changed\n")
    (tmp_path / "glossary" / "fr.json").write_text('{"a": "d"}')
    assert tree.current().version != changed.version and "lang/fr.json" in tree.current().files


def test_text_files_are_gzipped_once_and_tiny_ones_are_not(tree: AssetTree) -> None:
    files = tree.current().files
    css = files["css/x.css"]
    assert css.gzipped is not None and gzip.decompress(css.gzipped) == css.body
    assert len(css.gzipped) < len(css.body) / 4
    assert files["js/side.js"].gzipped is None  # below the size where gzip gains anything
    assert css.media_type.startswith("text/css") and files["lang/en.json"].media_type == "application/json"


def test_the_shell_names_every_asset_under_the_version_and_preloads_the_language_file(
    tree: AssetTree,
) -> None:
    shell = Shell(tree)
    prefix = tree.current().prefix
    html = shell.page("/", "pl").body.decode()
    assert f'href="{prefix}/css/x.css"' in html and f'src="{prefix}/js/app.js"' in html
    assert '"/static/css' not in html
    preloaded = re.findall(r'<link rel="modulepreload" href="([^"]+)">', html)
    assert preloaded == [f"{prefix}/{m}" for m in preloads(tree.current(), "/", None, missing=False)]
    assert f'<link rel="preload" as="fetch" href="{prefix}/lang/pl.json" crossorigin>' in html
    assert "lang/tr.json" not in shell.page("/", "tr").body.decode()  # no such file: nothing to preload
    missing = shell.page("/nowhere", "en", missing=True).body.decode()
    assert "Page not found" in missing and f"{prefix}/js/not_found.js" in missing


@pytest.mark.parametrize(
    ("cookie", "accept", "expected"),
    [
        ("fr", "pl,en;q=0.8", "fr"),  # the choice the client saved
        (None, "pl-PL,pl;q=0.9,en;q=0.8", "pl"),
        (None, "de-DE,de;q=0.9,tr;q=0.5,en;q=0.3", "tr"),  # the first we have
        (None, "en;q=0.2, fr;q=0.9", "fr"),  # by quality, not order
        (None, "fr;q=0, pl", "pl"),  # q=0: not acceptable
        ("xx", None, "en"),
        (None, "de", "en"),
    ],
)
def test_the_preloaded_language_is_the_cookie_else_accept_language_else_english(
    cookie: str | None, accept: str | None, expected: str
) -> None:
    assert preferred_language(cookie, accept, ["en", "pl", "fr", "tr"]) == expected


# -- the real tree -------------------------------------------------------------------------------


def test_the_real_router_table_has_every_route_of_app_js() -> None:
    snapshot = AssetTree(STATIC_DIR).current()
    source = (STATIC_DIR / ENTRY_MODULE).read_text()
    routes_block = source[source.index("const ROUTES") : source.index("];", source.index("const ROUTES"))]
    assert len(snapshot.routes) == routes_block.count("import(") >= 6
    assert snapshot.page_module("/") == "js/lobby.js"
    assert snapshot.page_module("/tables/abc123") == "js/table.js"
    assert snapshot.page_module("/replay/abc123") == "js/replay.js"
    assert snapshot.page_module("/players/Ada%20B") == "js/players.js"
    assert f'import("./{Path(NOT_FOUND_MODULE).name}")' in source  # the router's unknown path


def test_every_relative_import_of_the_real_client_names_a_file_that_exists() -> None:
    snapshot = AssetTree(STATIC_DIR).current()
    for module, imported in snapshot.imports.items():
        for name in imported:
            assert name in snapshot.files, f"{module} imports {name}, which is not in the tree"
    assert set(snapshot.imports[ENTRY_MODULE]) >= {"js/i18n.js", "js/account.js"}


@pytest.mark.parametrize("path", ["/", "/tables/abc", "/replay/abc", "/audit/abc", "/rankings/skull"])
def test_the_real_preloads_are_closed_under_static_imports(path: str) -> None:
    snapshot = AssetTree(STATIC_DIR).current()
    chosen = set(preloads(snapshot, path, "skull-king", missing=False)) | {ENTRY_MODULE}
    for module in chosen:
        assert set(snapshot.imports[module]) <= chosen, f"{module} imports a module not preloaded"
    assert snapshot.page_module(path) in chosen


def test_the_shell_preloads_a_games_own_board_module_where_the_client_finds_it_by_its_package() -> None:
    from domain.games import specs

    snapshot = AssetTree(STATIC_DIR).current()
    loader = snapshot.files["js/game_board.js"].body.decode()
    assert "`./games/${name}.js`" in loader and 'const DEFAULT = "default";' in loader
    assert "js/games/default.js" in snapshot.files  # the board of a game without its own
    boards = [spec for spec in specs() if f"js/games/{spec.package}.js" in snapshot.files]
    assert boards
    for spec in boards:
        assert game_module(spec.name) == f"js/games/{spec.package}.js"


def test_every_board_module_that_says_it_has_a_stylesheet_has_one_where_the_client_links_it() -> None:
    snapshot = AssetTree(STATIC_DIR).current()
    boards = [path for path in snapshot.files if re.fullmatch(r"js/games/\w+\.js", path)]

    def text(path: str) -> str:
        return snapshot.files[path].body.decode()

    styled = [path for path in boards if "export const stylesheet = true;" in text(path)]
    assert "js/games/default.js" in styled
    for path in styled:
        css = f"css/games/{Path(path).stem}.css"
        assert css in snapshot.files and snapshot.files[css].media_type.startswith("text/css"), css
    sheets = [path for path in snapshot.files if path.startswith("css/games/")]
    assert all(f"js/games/{Path(css).stem}.js" in styled for css in sheets)  # none left unlinked


def test_the_data_preloaded_for_a_page_is_what_its_module_fetches_at_once() -> None:
    snapshot = AssetTree(STATIC_DIR).current()
    api = snapshot.files["js/api.js"].body.decode()
    for module, urls in DATA.items():
        assert module in snapshot.files
        for url in urls:
            assert f'api("{url}")' in api
    assert "games.options()" in snapshot.files["js/game_info.js"].body.decode()  # read once per page load
    assert "js/game_info.js" in snapshot.imports["js/lobby.js"]
