"""Serving the web client's files and its page shell: fingerprinted and immutable, compressed when
the browser accepts it, revalidated where not fingerprinted; an HTML 404 page for a person.

- ``/static/<version>/<path>``: the tree's file with ``Cache-Control: public, max-age=31536000,
  immutable`` when ``<version>`` is the current one. An older version (a page loaded before a
  deploy, or from another process of a rolling one) gets today's file, revalidated, never cached
  for a year under a name it does not match.
- ``/static/<path>`` (the unversioned paths of before, e.g. the docs page's ``docs.js``): the same
  files, revalidated (``no-cache`` and an ETag: a 304 when unchanged).
- ``/static/<version>/lang/<lang>.json``: the glossary's language files (``services.api.assets``).
- ``/favicon.ico``: what browsers ask for when a page names no icon (a day of caching).
- Every page path: the shell for that path (``services.api.shell``), ``no-cache`` with an ETag.

Text files go out gzipped (compressed once, when the tree is read) with ``Vary: Accept-Encoding``
when the request's ``Accept-Encoding`` allows gzip.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from services.api.assets import VERSION, Asset
from services.api.shell import LANG_COOKIE, Page, Shell

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
FAVICON_CACHE = "public, max-age=86400"
FAVICON = "favicon.ico"
SHELL_VARY = "Accept-Encoding, Accept-Language, Cookie"  # the preloaded language follows both
API_PREFIXES = (
    "/games",
    "/lobby",
    "/me",
    "/accounts",
    "/leaderboards",
    "/static",
    "/docs/assets",
    "/openapi.json",
    "/healthz",
    "/livez",
    "/.well-known",
)
"""Paths whose 404 stays the JSON error of the API, even for a browser."""


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an ``Accept-Encoding`` value allows gzip (named with a non-zero quality, or ``*``)."""
    wildcard = False
    for part in accept_encoding.split(","):
        coding, _, params = part.strip().partition(";")
        coding = coding.strip().lower()
        if coding not in ("gzip", "x-gzip", "*"):
            continue
        quality = 1.0
        key, _, value = params.strip().partition("=")
        if key.strip() == "q":
            try:
                quality = float(value)
            except ValueError:
                quality = 0.0
        if coding == "*":
            wildcard = quality > 0
        else:
            return quality > 0
    return wildcard


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in tags or etag in tags


def respond(
    request: Request,
    body: bytes,
    gzipped: bytes | None,
    etag: str,
    media_type: str,
    cache_control: str,
    status_code: int = 200,
    vary: str = "Accept-Encoding",
) -> Response:
    """One representation of a file: gzipped if there is one and the client accepts it; 304 when
    the client's ETag is the current one."""
    packed = gzipped is not None and accepts_gzip(request.headers.get("accept-encoding", ""))
    tag = etag[:-1] + '-gz"' if packed else etag
    headers = {"Cache-Control": cache_control, "ETag": tag}
    if gzipped is not None or vary != "Accept-Encoding":
        headers["Vary"] = vary
    if status_code == 200 and _matches(request.headers.get("if-none-match"), tag):
        return Response(status_code=304, headers=headers)
    if packed:
        headers["Content-Encoding"] = "gzip"
    content = gzipped if packed and gzipped is not None else body
    return Response(content, status_code=status_code, headers=headers, media_type=media_type)


def respond_asset(request: Request, asset: Asset, cache_control: str) -> Response:
    return respond(request, asset.body, asset.gzipped, asset.etag, asset.media_type, cache_control)


def shell_of(request: Request) -> Shell:
    shell: Shell = request.app.state.shell
    return shell


async def static_file(request: Request) -> Response:
    """``/static/<version>/<path>`` (immutable when current) or ``/static/<path>`` (revalidated)."""
    path: str = request.path_params["path"]
    snapshot = shell_of(request).tree.current()
    head, _, rest = path.partition("/")
    cache_control = REVALIDATE
    if rest and VERSION.fullmatch(head):
        path = rest
        if head == snapshot.version:
            cache_control = IMMUTABLE
    asset = snapshot.files.get(path)
    if asset is None:
        raise HTTPException(404)
    return respond_asset(request, asset, cache_control)


async def favicon(request: Request) -> Response:
    asset = shell_of(request).tree.current().files.get(FAVICON)
    if asset is None:
        raise HTTPException(404)
    return respond_asset(request, asset, FAVICON_CACHE)


def page_response(request: Request, game: str | None = None, missing: bool = False) -> Response:
    shell = shell_of(request)
    lang = shell.language(request.cookies.get(LANG_COOKIE), request.headers.get("accept-language"))
    page: Page = shell.page(request.url.path, lang, game, missing)
    return respond(
        request,
        page.body,
        page.gzipped,
        page.etag,
        "text/html; charset=utf-8",
        REVALIDATE,
        status_code=404 if missing else 200,
        vary=SHELL_VARY,
    )


def wants_page(request: Request) -> bool:
    """A person's browser asking for a page (``text/html``, GET or HEAD) at a path outside the API."""
    if request.method not in ("GET", "HEAD"):
        return False
    path = request.url.path
    if any(path == prefix or path.startswith(prefix + "/") for prefix in API_PREFIXES):
        return False
    return "text/html" in request.headers.get("accept", "")
