"""Request middleware: the drain's bound on every request, cross-site refusals and security headers
(the request and game ids of every log line are bound by ``services.api.request_log``)."""

from __future__ import annotations

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.api.drain import Drain
from services.api.error_responses import error_body
from services.api.http import JSONResponse

log = structlog.get_logger("tablestream.http")


class DrainGuard:
    """Bounds every request by the drain's deadline (``services.api.drain``): a request still running
    when it passes is cancelled here, answered 503 ``shutting_down`` if it had not started its
    response, so uvicorn never has to cancel it (a plain-text 500 and a traceback)."""

    def __init__(self, app: ASGIApp, drain: Drain) -> None:
        self.app = app
        self.drain = drain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        with self.drain.request() as cancel:
            await self.app(scope, receive, send_tracked)
        if not cancel.cancelled_caught:
            return
        log.warning("request_cut_by_drain", path=scope["path"], response_started=started)
        if not started:
            body = error_body("shutting_down", "This server is shutting down; send the request again.")
            await JSONResponse(body, status_code=503, headers={"Retry-After": "1"})(scope, receive, send)


# -- the web surface: cross-site requests and security headers -----------------------------------

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
AUTH_COOKIES = (b"ts_account=", b"ts_seat_", b"ts_host_")  # the cookies that carry a token

# No inline script or style anywhere: every script is a file of this origin (the shell, the client's
# modules, Swagger UI under /docs/assets); styles come from files too, and what scripts set through
# the CSSOM (``element.style``) is not an inline style in CSP's sense. ``data:`` images: Swagger UI's
# icons. Workers and connections (fetch, server-sent events): this origin only. No frame may hold a
# page of this service (``frame-ancestors``; ``X-Frame-Options`` for browsers that predate it).
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "font-src 'self'; connect-src 'self'; worker-src 'self' blob:; media-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalized_origin(origin: str) -> str | None:
    """``scheme://host[:port]`` lower-cased, the port left out when it is the scheme's default;
    ``None`` for anything that is not an http(s) origin (``null``, a path, garbage)."""
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme not in _DEFAULT_PORTS or not rest or any(c in rest for c in "/?#@ \\"):
        return None
    host, port = rest, ""
    if rest.rfind(":") > rest.rfind("]"):  # a port (an IPv6 host's colons are inside brackets)
        host, _, port = rest.rpartition(":")
        if not port.isdigit() or len(port) > 5:
            return None
        port = "" if int(port) == _DEFAULT_PORTS[scheme] else str(int(port))
    if not host:
        return None
    return f"{scheme}://{host}{':' + port if port else ''}"


class SecurityHeaders:
    """The outermost layer of the app (outside Starlette's own error middleware): every answer,
    HTML, JSON, a static file, an event stream, an error, a 404 or a probe, carries the security
    headers; HSTS when the service is served over https (the request's scheme, which uvicorn takes
    from a trusted proxy's ``X-Forwarded-Proto``, or an https ``public_origin``)."""

    def __init__(self, app: ASGIApp, hsts_seconds: int, public_origin: str = "") -> None:
        self.app = app
        self.hsts = f"max-age={hsts_seconds}; includeSubDomains".encode() if hsts_seconds > 0 else None
        self.always_https = public_origin.lower().startswith("https://")

    def headers_for(self, scope: Scope) -> tuple[tuple[bytes, bytes], ...]:
        """The security headers an answer to this request carries (HSTS over https)."""
        if self.hsts is not None and (self.always_https or scope.get("scheme") == "https"):
            return (*SECURITY_HEADERS, (b"strict-transport-security", self.hsts))
        return SECURITY_HEADERS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = self.headers_for(scope)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [
                    *message.get("headers", []),
                    *((name, value) for name, value in extra if name not in present),
                ]
            await send(message)

        await self.app(scope, receive, send_with_headers)


class RequestGuard:
    """Refuses a state-changing request (POST, PUT, PATCH, DELETE) that a page of another origin could
    have sent in a browser's name (its body must also be JSON: ``services.api.http.read_body``):

    - its ``Origin`` is another origin than this service's own: 403 ``cross_origin`` (whatever
      token it carries: a page elsewhere has no business here, logging in included);
    - it carries a token cookie and no ``Authorization`` header (the browser added the cookie), no
      ``Origin``, and a ``Sec-Fetch-Site`` other than ``same-origin``: 403 ``cross_origin``.

    Every browser this client supports sends ``Origin`` with a ``POST`` (and ``Sec-Fetch-Site``);
    a request with neither is not a browser's: a script or a test suite, which may well keep the
    cookies the server set in a jar (``httpx.Client``, ``requests.Session``) and send them back.
    Those, and clients with a bearer token, are served as before: the public contract holds. The
    own origin is ``public_origin`` when set (behind a proxy that rewrites ``Host``), else the
    request's scheme and ``Host``."""

    def __init__(self, app: ASGIApp, public_origin: str = "") -> None:
        self.app = app
        self.public_origin = normalized_origin(public_origin) if public_origin else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in STATE_CHANGING:
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        log.info("request_refused", code="cross_origin", path=scope["path"], method=scope["method"])
        await JSONResponse(error_body("cross_origin", refusal), status_code=403)(scope, receive, send)

    def own_origin(self, scope: Scope, headers: dict[bytes, bytes]) -> str | None:
        if self.public_origin is not None:
            return self.public_origin
        host = headers.get(b"host", b"").decode("latin-1")
        return normalized_origin(f"{scope.get('scheme', 'http')}://{host}") if host else None

    def refusal(self, scope: Scope) -> str | None:
        """Why the request is refused, or ``None``."""
        headers: dict[bytes, bytes] = {}
        cookies = b""
        for name, value in scope["headers"]:
            if name == b"cookie":
                cookies += b"; " + value
            else:
                headers[name] = value
        origin = headers.get(b"origin")
        if origin is not None:
            sent_from = normalized_origin(origin.decode("latin-1"))
            if sent_from is None or sent_from != self.own_origin(scope, headers):
                return "This request came from a page of another site; it was refused."
        elif (
            b"authorization" not in headers
            and any(marker in cookies for marker in AUTH_COOKIES)
            and headers.get(b"sec-fetch-site", b"same-origin") != b"same-origin"
        ):
            return "A request with this service's cookies must come from its own pages (an Origin header)."
        return None
